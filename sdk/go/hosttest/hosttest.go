//go:build !wasip1

// Package hosttest runs guest code natively in go test: it installs a fake host that answers the
// SDK's host imports and records what the guest sends.
//
// It exists only in native builds, so a test file importing it starts with `//go:build !wasip1`
// (otherwise `GOOS=wasip1 GOARCH=wasm go vet ./...`, which compiles tests too, fails).
package hosttest

import (
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
	"github.com/wasmsched/wasmsched/sdk/go/internal/wire"
)

// Host is the fake host: set the values a call should see, read what the guest sent.
type Host = imports.Host

// LogRecord is one klog call the guest made.
type LogRecord = imports.LogRecord

// Install makes h the host for the rest of the test, and starts a new call (NewCall).
func Install(t testing.TB, h *Host) *Host {
	prev := imports.Fake
	imports.Fake = h
	t.Cleanup(func() { imports.Fake = prev })
	NewCall()
	return h
}

// NewCall starts a new host call, for tests that call plugin methods directly rather than through
// the SDK's exports: the SDK reads the snapshot's changes (handle.snapshot.changes) and the overlay
// at most once per call, so a test that changes them between two plugin calls starts a new one.
func NewCall() {
	if imports.BeginCall != nil {
		imports.BeginCall()
	}
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

// SnapshotNode is a node of a fake snapshot (ABI v2, docs/abi.md §14.1) with its pods and kube's
// NodeInfo sums. Allocatable defaults to the node's status.allocatable; the host computes the
// requested sums, which a test sets when its plugin reads them.
type SnapshotNode struct {
	Node                        *corev1.Node
	Pods                        []*corev1.Pod
	Requested, NonZeroRequested *api.Resource
	Allocatable                 *api.Resource
}

// SetSnapshot makes h serve the snapshot of nodes: `node`, `nodeList` and `nodeImageStates`
// (v1), and a handle.snapshot.changes value that brings any mirror to exactly these nodes (RESET,
// then the records). Call it again for the next cycle's snapshot.
func SetSnapshot(t testing.TB, h *Host, nodes ...SnapshotNode) {
	t.Helper()
	h.Nodes = map[string][]byte{}
	list := corev1.NodeList{}
	v := []byte{0, wire.Reset}
	for _, n := range nodes {
		raw := NodeBytes(t, n.Node)
		h.Nodes[n.Node.Name] = raw
		list.Items = append(list.Items, *n.Node)
		v = wire.AppendNode(v, n.Node.Name, raw, Sums(t, n.sums()))
		for _, p := range n.Pods {
			v = wire.AppendPod(v, n.Node.Name, PodKey(p), PodFlags(p), PodBytes(t, p))
		}
	}
	b, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	h.NodeList = b
	h.SnapshotChanges = append(h.SnapshotChanges, v)
	NewCall()
}

func (n SnapshotNode) sums() NodeSums {
	s := NodeSums{}
	if n.Requested != nil {
		s.Requested = *n.Requested
	}
	if n.NonZeroRequested != nil {
		s.NonZeroRequested = *n.NonZeroRequested
	}
	if n.Allocatable != nil {
		s.Allocatable = *n.Allocatable
	} else {
		a := n.Node.Status.Allocatable
		s.Allocatable = api.Resource{MilliCPU: a.Cpu().MilliValue(), Memory: a.Memory().Value(),
			EphemeralStorage: a.StorageEphemeral().Value(), AllowedPodNumber: int(a.Pods().Value())}
	}
	return s
}

// NodeSums is the `resources` JSON of a NODE record.
type NodeSums struct {
	Requested        api.Resource `json:"requested"`
	NonZeroRequested api.Resource `json:"nonZeroRequested"`
	Allocatable      api.Resource `json:"allocatable"`
}

// Sums encodes s as the host does.
func Sums(t testing.TB, s NodeSums) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// PodKey is a pod's key (docs/abi.md §1): its uid, or namespace/name without one.
func PodKey(p *corev1.Pod) string {
	if p.UID != "" {
		return string(p.UID)
	}
	return p.Namespace + "/" + p.Name
}

// PodFlags are the record flags kube's NodeInfo derives from a pod (§14.1).
func PodFlags(p *corev1.Pod) byte {
	var f byte
	a := p.Spec.Affinity
	if a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
		f |= wire.FlagAffinity
	}
	if a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		f |= wire.FlagRequiredAntiAffinity
	}
	return f
}

// Overlay encodes handle.node_info.overlay: pods added to and removed from the snapshot's node,
// and the NodeInfo's sums (nil: the snapshot's, sent as zero sums).
func Overlay(t testing.TB, node string, add, remove []*corev1.Pod, sums *NodeSums) []byte {
	var v []byte
	for _, p := range add {
		v = wire.AppendPod(v, node, PodKey(p), PodFlags(p), PodBytes(t, p))
	}
	for _, p := range remove {
		v = wire.AppendPodGone(v, node, PodKey(p))
	}
	s := NodeSums{}
	if sums != nil {
		s = *sums
	}
	return wire.AppendSums(v, Sums(t, s))
}

// Changes is the raw encoders of handle.snapshot.changes records, for tests of the mirror.
var Changes = struct {
	Node     func(b []byte, name string, node, resources []byte) []byte
	NodeGone func(b []byte, name string) []byte
	Pod      func(b []byte, node, key string, flags byte, pod []byte) []byte
	PodGone  func(b []byte, node, key string) []byte
	Reset    byte
}{wire.AppendNode, wire.AppendNodeGone, wire.AppendPod, wire.AppendPodGone, wire.Reset}

// Object is the JSON a watched object is served as (§14.2).
func Object(t testing.TB, obj any) []byte {
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// U32 is a u32 LE value, e.g. queueing_hint.event.
func U32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// ABI v2: the queue and gangs (docs/abi.md §15).

// WaitingPod is a pod waiting at Permit on the fake host (Host.Waiting).
type WaitingPod = imports.WaitingPod

// WaitingCall is a handle.waiting_pod.allow or .reject the guest made (Host.WaitingCalls).
type WaitingCall = imports.WaitingCall

// Waiting is a Host.Waiting entry for p, pending on plugins.
func Waiting(t testing.TB, p *corev1.Pod, plugins ...string) WaitingPod {
	return WaitingPod{Key: PodKey(p), Pod: PodBytes(t, p), Plugins: plugins}
}

// SetPods makes h's handle.pods.list serve pods.
func SetPods(t testing.TB, h *Host, pods ...*corev1.Pod) {
	h.Pods = nil
	for _, p := range pods {
		h.Pods = append(h.Pods, PodBytes(t, p))
	}
}

// QueuedPodInfo encodes queued_pod_info (§15.2); initial nil is a pod never attempted.
func QueuedPodInfo(t testing.TB, timestamp time.Time, initial *time.Time, attempts int) []byte {
	v := map[string]any{"timestamp": timestamp.UnixNano(), "initialAttemptTimestamp": nil, "attempts": attempts}
	if initial != nil {
		v["initialAttemptTimestamp"] = initial.UnixNano()
	}
	return Object(t, v)
}
