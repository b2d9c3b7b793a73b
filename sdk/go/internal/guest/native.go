//go:build !wasip1

package guest

import "github.com/wasmsched/wasmsched/sdk/go/internal/imports"

// Tests that call plugin methods directly (not through an export) start a "call" with
// hosttest.NewCall, so the SDK pulls the snapshot again and forgets the last call's overlay.
func init() { imports.BeginCall = beginCall }
