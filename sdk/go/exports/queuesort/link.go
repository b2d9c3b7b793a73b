// Package queuesort exports `queuesort` to the host (ABI v2, docs/abi.md §15.2), serving the
// plugin's api.QueueSortPlugin: the host asks one key per pod as it enters the active queue
// (queued_pod_info in, result.sort_key out) and orders the queue by the keys. Import it for its side
// effect in the main package of such a plugin, and enable the plugin under queueSort with
// PrioritySort disabled.
package queuesort

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("queuesort") }
