// Command coscheduling is the Coscheduling plugin of kubernetes-sigs/scheduler-plugins
// (pkg/coscheduling) as a wasm guest (ABI v2, docs/abi.md §14–§15: it sorts the queue, gates pods
// with PreEnqueue, reads PodGroups through handle.Objects, lists pods, and allows or rejects the
// gang's pods waiting at Permit). It keeps state across pods, so it runs with `sharedInstance: true`.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o coscheduling.wasm .
package main

import (
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/enqueue"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/permit"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/postbind"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/postfilter"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/preenqueue"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/queuesort"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/reserve"
	"github.com/wasmsched/wasmsched/sdk/go/plugin"

	coscheduling "github.com/wasmsched/wasmsched/examples/coscheduling/plugin"
)

func init() { plugin.Set(coscheduling.New) }

// main is required by the Go toolchain but never runs in a -buildmode=c-shared module.
func main() {}
