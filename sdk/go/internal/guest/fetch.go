// Package guest is the SDK's runtime inside the guest: the registered plugin, the cycle state, the
// per-call views of the host's values, and one function per ABI export. Each export package wraps
// one of these functions in a //go:wasmexport; they are plain Go here so that go test runs them.
package guest

import (
	"bytes"

	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
)

// scratch is the buffer getters try first (docs/abi.md §5 suggests 2048 bytes). It grows to the
// largest value seen, up to maxScratch, so a value that did not fit once (a filtered node list of a
// few hundred names) costs one host call, not two, every cycle after.
var scratch = make([]byte, minScratch)

const (
	minScratch = 2048
	maxScratch = 1 << 20
)

// fetch runs a getter with the scratch buffer and, if the value did not fit, again with a buffer of
// its size. The result aliases the scratch buffer until the next fetch: copy what you keep.
func fetch(get func(buf []byte) uint32) []byte {
	n := get(scratch)
	if n == 0 {
		return nil
	}
	if int(n) > len(scratch) {
		buf := make([]byte, n)
		n = get(buf)
		if int(n) > len(buf) { // the host broke §5 stability; never read past what it wrote
			panic("sdk: host value changed size within a call")
		}
		if len(buf) <= maxScratch {
			scratch = buf
		}
		return buf[:n]
	}
	return scratch[:n]
}

func Config() []byte { return bytes.Clone(fetch(imports.GetConfig)) }

// fetchString is fetch for text values.
func fetchString(get func(buf []byte) uint32) string {
	return string(fetch(get))
}
