//go:build wasip1

package postbind

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport postbind
func postbind() { guest.PostBind() }
