//go:build wasip1

package filter

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport filter
func filter() int32 { return guest.Filter() }
