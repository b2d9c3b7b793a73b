//go:build wasip1

package prescore

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport prescore
func prescore() int32 { return guest.PreScore() }
