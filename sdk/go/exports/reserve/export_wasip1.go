//go:build wasip1

package reserve

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport reserve
func reserve() int32 { return guest.Reserve() }

//go:wasmexport unreserve
func unreserve() { guest.Unreserve() }
