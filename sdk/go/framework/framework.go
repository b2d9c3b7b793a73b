// Package framework holds the ABI v2 event API with the names of kube-scheduler's framework
// (k8s.io/kube-scheduler/framework, kube 1.37): EventResource, ActionType, ClusterEvent,
// ClusterEventWithHint, QueueingHint and QueueingHintFn, and EnqueueExtensions with kube's
// EventsToRegister. Its values are the framework's own (docs/abi.md §14.3), unlike the v1 api
// package's ClusterEvent, whose numbering is the KSWE guest ABI's (§7); the two coexist, and a
// plugin implements one of the two EventsToRegister methods.
//
// Importing this package (a plugin implementing its EnqueueExtensions does) makes the `enqueue`
// export (package exports/enqueue, as for v1) send result.cluster_events_with_hints, and adds the
// export `queueinghint`, which calls the hints.
package framework

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/internal/guest"
	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
)

// EventResource names a resource in a ClusterEvent, as kube's framework does; a kind declared in
// the plugin's args.watch is "<resource>.<version>.<group>" (docs/abi.md §14.2, §14.3).
type EventResource string

const (
	// Pod is every pod event; AssignedPod, UnscheduledPod and TargetPod narrow it as in kube.
	Pod                   EventResource = "Pod"
	AssignedPod           EventResource = "AssignedPod"
	UnscheduledPod        EventResource = "UnscheduledPod"
	TargetPod             EventResource = "TargetPod"
	Node                  EventResource = "Node"
	PersistentVolume      EventResource = "PersistentVolume"
	PersistentVolumeClaim EventResource = "PersistentVolumeClaim"
	CSINode               EventResource = "storage.k8s.io/CSINode"
	CSIDriver             EventResource = "storage.k8s.io/CSIDriver"
	VolumeAttachment      EventResource = "storage.k8s.io/VolumeAttachment"
	CSIStorageCapacity    EventResource = "storage.k8s.io/CSIStorageCapacity"
	StorageClass          EventResource = "storage.k8s.io/StorageClass"
	ResourceClaim         EventResource = "resource.k8s.io/ResourceClaim"
	ResourceSlice         EventResource = "resource.k8s.io/ResourceSlice"
	DeviceClass           EventResource = "resource.k8s.io/DeviceClass"
	PodGroup              EventResource = "scheduling.k8s.io/PodGroup"
	CompositePodGroup     EventResource = "scheduling.k8s.io/CompositePodGroup"
	// WildCard matches every resource.
	WildCard EventResource = "*"
)

// WatchedResource is the EventResource of a kind declared in args.watch.
func WatchedResource(group, version, resource string) EventResource {
	return EventResource(resource + "." + version + "." + group)
}

// ActionType is a bit set of changes, with kube 1.37's values (docs/abi.md §7, right-hand column).
type ActionType int64

const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	UpdateNodeTaint
	UpdateNodeCondition
	UpdateNodeAnnotation
	UpdateNodeDeclaredFeature
	UpdateNodePreemptionPolicy
	UpdatePodLabel
	UpdatePodScaleDown
	UpdatePodScaleUp
	UpdatePodToleration
	UpdatePodSchedulingGatesEliminated
	UpdatePodGeneratedResourceClaim

	All ActionType = 1<<iota - 1

	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition |
		UpdateNodeAnnotation | UpdateNodeDeclaredFeature | UpdateNodePreemptionPolicy | UpdatePodLabel |
		UpdatePodScaleDown | UpdatePodScaleUp | UpdatePodToleration | UpdatePodSchedulingGatesEliminated |
		UpdatePodGeneratedResourceClaim

	None ActionType = 0
)

// ClusterEvent is a change that may make a pod this plugin rejected schedulable.
type ClusterEvent struct {
	Resource   EventResource
	ActionType ActionType
}

// QueueingHint says whether an event may make a rejected pod schedulable.
type QueueingHint int

const (
	QueueSkip QueueingHint = iota
	Queue
)

func (h QueueingHint) String() string {
	switch h {
	case QueueSkip:
		return "QueueSkip"
	case Queue:
		return "Queue"
	}
	return ""
}

// QueueingHintFn is kube's QueueingHintFn without the logger (log with package klog). oldObj and
// newObj are *corev1.Pod for pod events, *corev1.Node for node events, and
// *unstructured.Unstructured for every other kind; nil when absent (oldObj for an Add, newObj for
// a Delete). An error queues the pod, as in kube.
type QueueingHintFn func(pod *corev1.Pod, oldObj, newObj any) (QueueingHint, error)

// ClusterEventWithHint is an event with an optional hint; without one every matching event
// requeues the pod.
type ClusterEventWithHint struct {
	Event          ClusterEvent
	QueueingHintFn QueueingHintFn
}

// EnqueueExtensions is kube's EnqueueExtensions: the events, with hints, that may make a pod this
// plugin rejected schedulable. An error or an empty list makes the host use its default list (§7).
type EnqueueExtensions interface {
	EventsToRegister() ([]ClusterEventWithHint, error)
}

func init() { guest.EnqueueV2 = enqueueV2{} }

type enqueueV2 struct{}

func (enqueueV2) Implemented(p api.Plugin) bool { _, ok := p.(EnqueueExtensions); return ok }

// registered is the plugin's list, asked for once per instance: `queueinghint` runs on any idle
// instance, which may never have run `enqueue`.
var registered []ClusterEventWithHint

func events() ([]ClusterEventWithHint, error) {
	if registered != nil {
		return registered, nil
	}
	evs, err := guest.Plugin.(EnqueueExtensions).EventsToRegister()
	if err != nil {
		return nil, err
	}
	registered = evs
	return evs, nil
}

type wireEvent struct {
	Resource EventResource `json:"resource"`
	Action   ActionType    `json:"action"`
	Hint     bool          `json:"hint"`
}

func (enqueueV2) Enqueue() {
	evs, err := events()
	if err != nil {
		// EventsToRegister never fails the scheduler: with nothing sent the host uses its
		// default list (docs/abi.md §7); the error is what a log line can tell.
		imports.Log(2, "EventsToRegister: "+err.Error())
		return
	}
	out := make([]wireEvent, len(evs))
	for i, e := range evs {
		out[i] = wireEvent{e.Event.Resource, e.Event.ActionType, e.QueueingHintFn != nil}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	imports.ResultClusterEventsWithHints(b)
}

// hintError is what `queueinghint` returns for an error: any value but 0 and 1 is one (§14.3), and
// the queue then queues the pod, as kube does when a hint fails; the text goes with the reason.
const hintError = 2

func failHint(msg string) int32 {
	imports.ResultStatusReason(msg)
	return hintError
}

func (enqueueV2) QueueingHint() int32 {
	evs, err := events()
	if err != nil {
		return failHint("EventsToRegister: " + err.Error())
	}
	raw := guest.Fetch(imports.QueueingHintEvent)
	if len(raw) < 4 {
		return failHint("queueinghint: no queueing_hint.event")
	}
	idx := int(uint32(raw[0]) | uint32(raw[1])<<8 | uint32(raw[2])<<16 | uint32(raw[3])<<24)
	if idx >= len(evs) {
		return failHint(fmt.Sprintf("queueinghint: event %d, but %d are registered", idx, len(evs)))
	}
	e := evs[idx]
	if e.QueueingHintFn == nil {
		return int32(Queue)
	}
	oldObj := decodeObject(e.Event.Resource, imports.QueueingHintOldObject)
	newObj := decodeObject(e.Event.Resource, imports.QueueingHintNewObject)
	hint, err := e.QueueingHintFn(guest.CurrentPod().Pod(), oldObj, newObj)
	if err != nil {
		return failHint(err.Error())
	}
	return int32(hint)
}

// decodeObject decodes an event's object as the host encodes it (§14.3): protobuf for pods and
// nodes, JSON otherwise. Absent is an untyped nil, as kube passes. JSON always starts with '{' and a
// protobuf Pod or Node never does (its first byte is field 1's tag, 0x0A), which tells them apart
// for WildCard events too; protobuf under WildCard is read as a Pod.
func decodeObject(r EventResource, get func([]byte) uint32) any {
	raw := guest.Fetch(get)
	if raw == nil {
		return nil
	}
	switch {
	case raw[0] == '{':
	case r == Node:
		n := &corev1.Node{}
		if err := n.Unmarshal(raw); err != nil {
			panic(fmt.Sprintf("sdk: decoding a queueing hint's node: %v", err))
		}
		return n
	default:
		p := &corev1.Pod{}
		if err := p.Unmarshal(raw); err != nil {
			panic(fmt.Sprintf("sdk: decoding a queueing hint's pod: %v", err))
		}
		return p
	}
	var obj map[string]any
	// apimachinery's json keeps integers as int64, as unstructured's accessors expect.
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		panic(fmt.Sprintf("sdk: decoding a queueing hint's %s: %v", r, err))
	}
	return &unstructured.Unstructured{Object: obj}
}
