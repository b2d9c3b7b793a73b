// Package preenqueue exports `preenqueue` to the host (ABI v2, docs/abi.md §15.1), serving the
// plugin's api.PreEnqueuePlugin: a status other than Success gates the pod before the active queue.
// Import it for its side effect in the main package of a plugin that implements that interface.
package preenqueue

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("preenqueue") }
