// Package bind exports `bind` to the host, serving the plugin's api.BindPlugin.
// Import it for its side effect in the main package of a plugin that implements that interface.
package bind

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("bind") }
