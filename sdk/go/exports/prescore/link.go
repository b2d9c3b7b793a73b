// Package prescore exports `prescore` to the host, serving the plugin's api.PreScorePlugin.
// Import it for its side effect in the main package of a plugin that implements that interface.
package prescore

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("prescore") }
