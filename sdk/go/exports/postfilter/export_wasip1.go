//go:build wasip1

package postfilter

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport postfilter
func postfilter() uint64 { return guest.PostFilter() }
