// Package handle is the guest's view of the framework Handle: the guest config, the snapshot's
// node lister, the event recorder and the pods waiting at Permit; with ABI v2 (docs/abi.md §14)
// also the snapshot with pods (SnapshotSharedLister), watched objects (Objects), nominated pods,
// and (§15) every waiting pod with kube's Allow and Reject (IterateOverWaitingPods), every pod the
// scheduler knows (Pods), Activate, and the scheduler's clock (Now).
package handle

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

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

// SharedLister is kube's SharedLister, for the snapshot's nodes with their pods (ABI v2,
// docs/abi.md §14.1).
type SharedLister struct{}

// SnapshotSharedLister returns the lister of the SDK's mirror of the scheduler's snapshot.
func SnapshotSharedLister() SharedLister { return SharedLister{} }

// NodeInfos returns the snapshot's NodeInfoLister.
func (SharedLister) NodeInfos() SnapshotNodeInfoLister { return SnapshotNodeInfoLister{} }

// SnapshotNodeInfoLister is kube's NodeInfoLister over the mirror. The mirror is brought up to date
// at the first use in each call; the lists and NodeInfos are shared and must not be changed.
type SnapshotNodeInfoLister struct{}

// List returns every node of the snapshot (those with a Node object).
func (SnapshotNodeInfoLister) List() ([]api.NodeInfo, error) { return guest.Sync().List(), nil }

// HavePodsWithAffinityList returns the nodes with at least one pod with (anti-)affinity.
func (SnapshotNodeInfoLister) HavePodsWithAffinityList() ([]api.NodeInfo, error) {
	return guest.Sync().HavePodsWithAffinityList(), nil
}

// HavePodsWithRequiredAntiAffinityList returns the nodes with at least one pod with required
// anti-affinity.
func (SnapshotNodeInfoLister) HavePodsWithRequiredAntiAffinityList() ([]api.NodeInfo, error) {
	return guest.Sync().HavePodsWithRequiredAntiAffinityList(), nil
}

// Get returns the named node, with kube's error text when the snapshot has none.
func (SnapshotNodeInfoLister) Get(name string) (api.NodeInfo, error) {
	if ni := guest.Sync().Get(name); ni != nil {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

// Objects returns a lister of a kind declared in the plugin's args.watch (docs/abi.md §14.2). The
// objects are the informer's current ones, as kube's listers give, and as theirs read only: an object
// is decoded once per version and shared.
func Objects(gvr schema.GroupVersionResource) ObjectLister { return ObjectLister{gvr} }

// ObjectLister lists and gets objects of one watched kind.
type ObjectLister struct {
	gvr schema.GroupVersionResource
}

func (l ObjectLister) query() guest.ObjectQuery {
	return guest.ObjectQuery{Group: l.gvr.Group, Version: l.gvr.Version, Resource: l.gvr.Resource}
}

// List returns the objects in namespace ("" for all) whose labels match selector (nil for all), in
// (namespace, name) order. The host filters by the selector's text; the SDK checks each object
// against the selector too, so the result never depends on how a host parses it.
func (l ObjectLister) List(namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	if selector == nil {
		selector = labels.Everything()
	}
	if !selector.Empty() && selector.String() == "" { // labels.Nothing(): its text would match all
		return nil, nil
	}
	q := l.query()
	q.Namespace, q.LabelSelector = namespace, selector.String()
	var out []*unstructured.Unstructured
	for _, raw := range guest.ListObjects(q) {
		u, err := decodeUnstructured(raw)
		if err != nil {
			return nil, err
		}
		if selector.Matches(labels.Set(u.GetLabels())) {
			out = append(out, u)
		}
	}
	return out, nil
}

// Get returns the named object, or a NotFound error (apierrors.IsNotFound).
func (l ObjectLister) Get(namespace, name string) (*unstructured.Unstructured, error) {
	q := l.query()
	q.Namespace, q.Name = namespace, name
	raw := guest.GetObject(q)
	if raw == nil {
		return nil, apierrors.NewNotFound(l.gvr.GroupResource(), name)
	}
	return decodeUnstructured(raw)
}

// decodedObjects keeps the watched objects decoded, by their bytes: an object read again unchanged is
// not decoded again (JSON decoding is slow in a guest, and a plugin may read the same object in every
// call). Emptied when it reaches decodedObjectsMax entries.
var decodedObjects = map[string]*unstructured.Unstructured{}

const decodedObjectsMax = 4096

// decodeUnstructured decodes the host's JSON of an object, once per version: the object is shared by
// the reads that return it, read only, as kube's listers' objects are.
func decodeUnstructured(raw []byte) (*unstructured.Unstructured, error) {
	if u, ok := decodedObjects[string(raw)]; ok {
		return u, nil
	}
	var obj map[string]any
	// apimachinery's json keeps integers as int64, as unstructured's accessors expect.
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decoding a watched object from the host: %w", err)
	}
	u := &unstructured.Unstructured{Object: obj}
	if len(decodedObjects) >= decodedObjectsMax {
		clear(decodedObjects)
	}
	decodedObjects[string(raw)] = u
	return u, nil
}

// NominatedPodsForNode returns the pods nominated to the node, highest priority first (kube's
// PodNominator.NominatedPodsForNode). Pods are decoded when Pod() is first called.
func NominatedPodsForNode(nodeName string) []api.PodInfo { return guest.NominatedPodsForNode(nodeName) }

// RunFilterPluginsWithNominatedPods runs the profile's Filter plugins for the pod on nodeInfo's node
// with the nominated pods added, as kube's Handle does. The host runs them for the call's pod and
// with the call's CycleState, so state must be the state this call was given (an Error status
// otherwise) and pod the call's pod. The host may call this plugin's Filter from inside it.
func RunFilterPluginsWithNominatedPods(state api.CycleState, _ api.PodInfo, nodeInfo api.NodeInfo) *api.Status {
	return guest.RunFilterPluginsWithNominatedPods(state, nodeInfo.Name())
}
