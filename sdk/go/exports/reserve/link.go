// Package reserve exports `reserve` and `unreserve` to the host, serving the plugin's api.ReservePlugin.
// Import it for its side effect in the main package of a plugin that implements that interface.
package reserve

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("reserve") }
