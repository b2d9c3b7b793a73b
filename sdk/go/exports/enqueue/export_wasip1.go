//go:build wasip1

package enqueue

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport enqueue
func enqueue() { guest.Enqueue() }
