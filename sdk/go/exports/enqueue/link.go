// Package enqueue exports `enqueue` to the host, serving the plugin's api.EnqueueExtensions.
// Import it for its side effect in the main package of a plugin that implements that interface.
package enqueue

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("enqueue") }
