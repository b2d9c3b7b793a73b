// Command noderesourcetopology is the NodeResourceTopologyMatch plugin of kubernetes-sigs/scheduler-plugins
// (pkg/noderesourcetopology) as a wasm guest (ABI v2: it reads NodeResourceTopology objects through
// handle.Objects and registers their cluster events):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o noderesourcetopology.wasm .
package main

import (
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/enqueue"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/filter"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/score"
	"github.com/wasmsched/wasmsched/sdk/go/plugin"

	noderesourcetopology "github.com/wasmsched/wasmsched/examples/noderesourcetopology/plugin"
)

func init() { plugin.Set(noderesourcetopology.New) }

// main is required by the Go toolchain but never runs in a -buildmode=c-shared module.
func main() {}
