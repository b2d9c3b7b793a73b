// Package enqueue exports `enqueue` to the host, serving the plugin's api.EnqueueExtensions (v1
// events) or framework.EnqueueExtensions (kube's events with queueing hints, docs/abi.md §14.3).
// Import it for its side effect in the main package of such a plugin. The `queueinghint` export
// comes with package framework, which every plugin registering hints imports: a v1 plugin's module
// then has no v2 export.
package enqueue

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() { guest.Link("enqueue") }
