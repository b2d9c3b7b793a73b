//go:build wasip1

package prefilterextensions

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport addpod
func addpod() int32 { return guest.AddPod() }

//go:wasmexport removepod
func removepod() int32 { return guest.RemovePod() }
