//go:build wasip1

package framework

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

// queueinghint is exported by this package, not by exports/enqueue: only plugins that register
// hints import it, so a v1 guest exports no v2 name (docs/abi.md §14).
//
//go:wasmexport queueinghint
func queueinghint() int32 { return guest.QueueingHint() }
