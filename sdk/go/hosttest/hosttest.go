//go:build !wasip1

// Package hosttest runs guest code natively in go test: it installs a fake host that answers the
// SDK's host imports and records what the guest sends.
//
// It exists only in native builds, so a test file importing it starts with `//go:build !wasip1`
// (otherwise `GOOS=wasip1 GOARCH=wasm go vet ./...`, which compiles tests too, fails).
package hosttest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
)

// Host is the fake host: set the values a call should see, read what the guest sent.
type Host = imports.Host

// LogRecord is one klog call the guest made.
type LogRecord = imports.LogRecord

// Install makes h the host for the rest of the test.
func Install(t testing.TB, h *Host) *Host {
	prev := imports.Fake
	imports.Fake = h
	t.Cleanup(func() { imports.Fake = prev })
	return h
}

// PodBytes is the protobuf encoding the host sends for a pod.
func PodBytes(t testing.TB, p *corev1.Pod) []byte {
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// NodeBytes is the protobuf encoding the host sends for a node.
func NodeBytes(t testing.TB, n *corev1.Node) []byte {
	b, err := n.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
