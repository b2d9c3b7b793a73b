//go:build wasip1

package bind

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport bind
func bind() int32 { return guest.Bind() }
