//go:build wasip1

package score

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport score
func score() uint64 { return guest.Score() }
