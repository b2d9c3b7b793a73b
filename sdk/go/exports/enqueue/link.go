// Package enqueue exports `enqueue` to the host, serving the plugin's api.EnqueueExtensions (v1
// events) or framework.EnqueueExtensions (kube's events with queueing hints, which it also exports
// `queueinghint` for). Import it for its side effect in the main package of such a plugin.
package enqueue

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("enqueue") }
