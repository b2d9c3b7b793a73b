//go:build wasip1

package prebind

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport prebind
func prebind() int32 { return guest.PreBind() }
