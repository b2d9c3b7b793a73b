// Package permit exports `permit` to the host, serving the plugin's api.PermitPlugin.
// Import it for its side effect in the main package of a plugin that implements that interface.
package permit

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("permit") }
