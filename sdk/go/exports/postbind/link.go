// Package postbind exports `postbind` to the host, serving the plugin's api.PostBindPlugin.
// Import it for its side effect in the main package of a plugin that implements that interface.
package postbind

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("postbind") }
