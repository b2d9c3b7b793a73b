// Package imports is the guest side of the host imports of docs/abi.md §4, over Go byte slices.
//
// Under wasip1 each function is a //go:wasmimport of the host. Elsewhere (go test on the build
// machine) the same functions are served by Fake, so the SDK and plugins test natively.
//
// Getters follow the buf/buf_limit protocol (§5): they write the value only if it fits in buf and
// always return its full length.
package imports
