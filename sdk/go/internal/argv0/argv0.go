// Package argv0 gives the guest a program name before k8s.io/klog/v2 initialises.
//
// The host passes argv verbatim (docs/abi.md §2), so a guest configured without `args` starts with an
// empty os.Args, and klog's package init indexes os.Args[0] and panics. Go initialises ready
// packages in import-path order (spec, "Package initialization"), so this package, which imports
// only os and whose path sorts before "k8s.io/", runs before klog does.
package argv0

import "os"

// Name is os.Args[0] when the host passed no arguments.
const Name = "wasm-guest"

func init() {
	if len(os.Args) == 0 {
		os.Args = []string{Name}
	}
}
