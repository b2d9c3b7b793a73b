// Command interpodaffinity is kube-scheduler 1.37.2's InterPodAffinity plugin as a wasm guest
// (ABI v2: it reads the snapshot's pods, the namespaces, and registers queueing hints):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o interpodaffinity.wasm .
package main

import (
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/enqueue"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/filter"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/normalizescore"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/prefilterextensions"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/prescore"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/score"
	"github.com/wasmsched/wasmsched/sdk/go/plugin"

	interpodaffinity "github.com/wasmsched/wasmsched/examples/interpodaffinity/plugin"
)

func init() { plugin.Set(interpodaffinity.New) }

// main is required by the Go toolchain but never runs in a -buildmode=c-shared module.
func main() {}
