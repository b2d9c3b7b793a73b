// Package filter exports `filter` to the host, serving the plugin's api.FilterPlugin.
// Import it for its side effect in the main package of a plugin that implements that interface.
package filter

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("filter") }
