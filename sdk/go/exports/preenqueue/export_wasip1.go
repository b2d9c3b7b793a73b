//go:build wasip1

package preenqueue

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport preenqueue
func preenqueue() int32 { return guest.PreEnqueue() }
