// Package prefilterextensions exports `addpod` and `removepod` to the host, serving the plugin's
// api.PreFilterExtensions, and `cyclestate_clone` (docs/abi.md §14.4), so that preemption's dry
// runs change clones of the CycleState, as in kube. Import it for its side effect in the main
// package of a plugin that implements that interface.
package prefilterextensions

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

func init() {
	guest.Link("prefilterextensions")
	guest.EnableClones()
}
