// Package prebind exports `prebind` to the host, serving the plugin's api.PreBindPlugin.
// Import it for its side effect in the main package of a plugin that implements that interface.
package prebind

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("prebind") }
