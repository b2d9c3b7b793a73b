//go:build wasip1

package normalizescore

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport normalizescore
func normalizescore() int32 { return guest.NormalizeScore() }
