// Command advanced is the TeamPlacement plugin as a wasm guest, an example of every extension
// point of a scheduling and binding cycle sharing state through CycleState:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o advanced.wasm .
package main

import (
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/filter"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/permit"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/postbind"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/prescore"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/reserve"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/score"
	"github.com/wasmsched/wasmsched/sdk/go/plugin"

	advanced "github.com/wasmsched/wasmsched/examples/advanced/plugin"
)

func init() { plugin.Set(advanced.New) }

// main is required by the Go toolchain but never runs in a -buildmode=c-shared module.
func main() {}
