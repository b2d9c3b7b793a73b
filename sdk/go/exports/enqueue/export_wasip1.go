//go:build wasip1

package enqueue

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport enqueue
func enqueue() { guest.Enqueue() }

// queueinghint is called only for events registered with a hint (docs/abi.md §14.3), which only
// plugins implementing framework.EnqueueExtensions send; it imports nothing for v1 plugins.
//
//go:wasmexport queueinghint
func queueinghint() int32 { return guest.QueueingHint() }
