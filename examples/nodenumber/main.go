// Command nodenumber is the NodeNumber plugin as a wasm guest:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o nodenumber.wasm .
package main

import (
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/enqueue"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/prescore"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/score"
	"github.com/wasmsched/wasmsched/sdk/go/plugin"

	nodenumber "github.com/wasmsched/wasmsched/examples/nodenumber/plugin"
)

func init() { plugin.Set(nodenumber.New) }

// main is required by the Go toolchain but never runs in a -buildmode=c-shared module.
func main() {}
