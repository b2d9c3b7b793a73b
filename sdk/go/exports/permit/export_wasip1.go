//go:build wasip1

package permit

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport permit
func permit() uint64 { return guest.Permit() }
