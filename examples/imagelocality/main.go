// Command imagelocality is kube-scheduler's ImageLocality score plugin as a wasm guest:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o imagelocality.wasm .
package main

import (
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/prescore"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/score"
	"github.com/wasmsched/wasmsched/sdk/go/plugin"

	imagelocality "github.com/wasmsched/wasmsched/examples/imagelocality/plugin"
)

func init() { plugin.Set(imagelocality.New) }

// main is required by the Go toolchain but never runs in a -buildmode=c-shared module.
func main() {}
