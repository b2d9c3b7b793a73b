// Package postfilter exports `postfilter` to the host, serving the plugin's api.PostFilterPlugin.
// Import it for its side effect in the main package of a plugin that implements that interface.
package postfilter

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("postfilter") }
