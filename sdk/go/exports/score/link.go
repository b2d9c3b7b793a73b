// Package score exports `score` to the host, serving the plugin's api.ScorePlugin.
// Import it for its side effect in the main package of a plugin that implements that interface.
package score

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("score") }
