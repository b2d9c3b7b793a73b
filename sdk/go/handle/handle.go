// Package handle is the guest's view of the framework Handle: the guest config, the snapshot's
// node lister, the event recorder and the pods waiting at Permit.
package handle

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/internal/guest"
	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
)

// GetConfig returns pluginConfig args.guestConfig verbatim; nil when it is empty.
func GetConfig() []byte { return guest.Config() }

// NodeInfoLister reads the scheduler's snapshot, like SnapshotSharedLister().NodeInfos().
type NodeInfoLister struct{}

// NodeInfos returns the snapshot's node lister.
func NodeInfos() NodeInfoLister { return NodeInfoLister{} }

// List returns all nodes in the snapshot's order.
func (NodeInfoLister) List() []api.NodeInfo { return guest.ListNodeInfos() }

// Get returns the named node, or an error when the snapshot has no such node.
func (NodeInfoLister) Get(name string) (api.NodeInfo, error) {
	ni := guest.NewNodeInfo(name)
	if ni.Node() == nil {
		return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
	}
	return ni, nil
}

// WaitingPod is a pod held at Permit.
type WaitingPod struct {
	pod *corev1.Pod
}

// GetPod returns the waiting pod.
func (w *WaitingPod) GetPod() *corev1.Pod { return w.pod }

// GetWaitingPod returns the pod with this UID waiting at Permit, or nil.
func GetWaitingPod(uid string) *WaitingPod {
	buf := make([]byte, 2048)
	for {
		imports.GetWaitingPod(uid, buf)
		if buf[0] == 0 { // 8 zero bytes: not found (a Pod never starts with tag 0)
			return nil
		}
		if binary.LittleEndian.Uint32(buf) == 0xFFFFFFFF { // too small: u32 length follows
			buf = make([]byte, binary.LittleEndian.Uint32(buf[4:])+1)
			continue
		}
		pod := &corev1.Pod{}
		if err := pod.Unmarshal(buf[:podEnd(buf)]); err != nil {
			panic(fmt.Sprintf("sdk: decoding waiting pod %s: %v", uid, err))
		}
		return &WaitingPod{pod: pod}
	}
}

// podEnd finds the end of a Pod written without a length (docs/abi.md §4.4): walk its top-level
// length-delimited fields until a 0x00 tag or the end of the buffer.
func podEnd(b []byte) int {
	i := 0
	for i < len(b) && b[i] != 0 {
		i++ // the tag: fields 1..3, wire type 2, one byte
		n, w := binary.Uvarint(b[i:])
		if w <= 0 || uint64(len(b)-i-w) < n {
			return len(b)
		}
		i += w + int(n)
	}
	return i
}

// RejectWaitingPod rejects the waiting pod with this UID; false when there is none.
func RejectWaitingPod(uid string) bool {
	var out [8]byte
	imports.RejectWaitingPod(uid, out[:])
	return binary.LittleEndian.Uint64(out[:]) == 1
}

// EventRecorder records Kubernetes events, like the framework's events.EventRecorder.
type EventRecorder struct{}

// GetEventRecorder returns the recorder.
func GetEventRecorder() EventRecorder { return EventRecorder{} }

type objectReference struct {
	Kind, APIVersion, Name, Namespace, UID, ResourceVersion string
}

type event struct {
	RegardingReference objectReference
	RelatedReference   objectReference
	Eventtype          string
	Reason             string
	Action             string
	Note               string
}

// Eventf records an event about regarding (and related, which may be nil): a *corev1.Pod, a
// *corev1.Node or a *corev1.ObjectReference; a nil pointer of those types is an empty reference.
// note is a format string for args.
func (EventRecorder) Eventf(regarding, related any, eventtype, reason, action, note string, args ...any) {
	e := event{RegardingReference: reference(regarding), RelatedReference: reference(related),
		Eventtype: eventtype, Reason: reason, Action: action, Note: fmt.Sprintf(note, args...)}
	buf, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	imports.Eventf(buf)
}

func reference(obj any) objectReference {
	switch o := obj.(type) {
	case nil:
		return objectReference{}
	case *corev1.Pod:
		if o == nil { // e.g. a typed nil from a lookup that found nothing
			return objectReference{}
		}
		return objectReference{Kind: "Pod", APIVersion: "v1", Name: o.Name, Namespace: o.Namespace,
			UID: string(o.UID), ResourceVersion: o.ResourceVersion}
	case *corev1.Node:
		if o == nil { // e.g. NodeInfo.Node() of a node not in the snapshot
			return objectReference{}
		}
		return objectReference{Kind: "Node", APIVersion: "v1", Name: o.Name, UID: string(o.UID),
			ResourceVersion: o.ResourceVersion}
	case *corev1.ObjectReference:
		if o == nil {
			return objectReference{}
		}
		return objectReference{Kind: o.Kind, APIVersion: o.APIVersion, Name: o.Name, Namespace: o.Namespace,
			UID: string(o.UID), ResourceVersion: o.ResourceVersion}
	default:
		panic(fmt.Sprintf("sdk: Eventf: cannot reference a %T; pass a *corev1.Pod, *corev1.Node or "+
			"*corev1.ObjectReference", obj))
	}
}
