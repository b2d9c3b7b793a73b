//go:build wasip1

package score

import "github.com/wasmsched/wasmsched/sdk/go/internal/guest"

//go:wasmexport score
func score() uint64 { return guest.Score() }

// scorenodes is score's batch form (docs/abi.md §17 [+]): a host that knows it scores a pod's nodes in
// one call; KSWE's host, which does not, calls score per node.
//
//go:wasmexport scorenodes
func scorenodes() uint64 { return guest.ScoreNodes() }
