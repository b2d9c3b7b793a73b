//go:build wasip1

package queuesort

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport queuesort
func queuesort() int32 { return guest.QueueSort() }
