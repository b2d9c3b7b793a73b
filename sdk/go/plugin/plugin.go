// Package plugin registers the guest's plugin. Call Set once, from an init function of the main
// package (a -buildmode=c-shared module runs package inits, never main), and import the export
// package of each extension point the plugin implements:
//
//	import (
//		"github.com/wasmsched/wasmsched/sdk/go/plugin"
//		_ "github.com/wasmsched/wasmsched/sdk/go/exports/score"
//	)
//
//	func init() { plugin.Set(myplugin.New) }
//
// Only the extension points whose export packages are linked become active on the host; Set
// panics (failing the guest's instantiation with the message) when those and the interfaces the
// plugin implements differ. PreFilter is exported here, always: it starts every pod's cycle and
// empties the CycleState.
package plugin

import (
	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
	_ "github.com/wasmsched/wasmsched/sdk/go/internal/argv0"
	"github.com/wasmsched/wasmsched/sdk/go/internal/guest"
)

// Set builds the plugin with newPlugin from the guest config (pluginConfig args.guestConfig) and
// registers it. A constructor error or a mismatch between implemented interfaces and linked export
// packages panics, so that the host reports it when loading the guest.
func Set[P api.Plugin](newPlugin func(config []byte) (P, error)) {
	p, err := newPlugin(handle.GetConfig())
	if err != nil {
		panic("plugin.Set: " + err.Error())
	}
	if err := guest.Set(p); err != nil {
		panic(err.Error())
	}
}

// SetPlugin registers an already built plugin, with the checks of Set.
func SetPlugin(p api.Plugin) {
	if err := guest.Set(p); err != nil {
		panic(err.Error())
	}
}
