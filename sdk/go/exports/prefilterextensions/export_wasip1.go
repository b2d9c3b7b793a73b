//go:build wasip1

package prefilterextensions

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport addpod
func addpod() int32 { return guest.AddPod() }

//go:wasmexport removepod
func removepod() int32 { return guest.RemovePod() }

// cyclestate_clone gives kube's CycleState.Clone semantics to preemption's dry runs (docs/abi.md
// §14.4): AddPod and RemovePod then change a copy, never PreFilter's state. It is linked with
// AddPod/RemovePod because only they change a state between clones.
//
//go:wasmexport cyclestate_clone
func cyclestateClone() int32 { return guest.CloneState() }
