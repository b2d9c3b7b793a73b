//go:build wasip1

package plugin

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport prefilter
func prefilter() int32 { return guest.PreFilter() }
