// Package normalizescore exports `normalizescore` to the host, serving the plugin's api.ScoreExtensions.
// Import it for its side effect in the main package of a plugin that implements that interface.
package normalizescore

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("normalizescore") }
