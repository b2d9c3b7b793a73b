// Package api holds the plugin interfaces of the scheduling framework as guests see them.
//
// A plugin is any value; it implements the subset of these interfaces it needs and is registered once
// with plugin.Set. The names follow kube-scheduler's framework (pkg/scheduler/framework/interface.go).
package api

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Plugin is a scheduler plugin: any value implementing at least one interface below.
type Plugin any

// CycleState is per-pod storage for one scheduling and binding cycle. It is emptied at the start of
// every PreFilter, and it is there in every later call for the same pod (the host pins the instance).
type CycleState interface {
	Read(key string) (any, bool)
	Write(key string, val any)
	Delete(key string)
	// Clone copies the state as kube's CycleState.Clone does: a value implementing StateData is
	// cloned with its Clone, any other value is shared. Preemption's dry runs work on clones
	// (docs/abi.md §14.4), so AddPod/RemovePod must change only cloned values.
	Clone() CycleState
}

// StateData is a CycleState value with kube's Clone (framework.StateData).
type StateData interface {
	Clone() StateData
}

// PodInfo is the pod a call is about. Pod decodes the host's protobuf on first use; the decoded pod is
// cached until the host sends different bytes (for a whole cycle), so treat it as read-only.
type PodInfo interface {
	Pod() *corev1.Pod
}

// NodeInfo is a node of the scheduler's snapshot. Node and ImageStates ask the host on first use.
//
// The pods and sums (ABI v2, docs/abi.md §14.1) come from the SDK's mirror of the snapshot, brought
// up to date at most once per call and only in calls that read them; in Filter, Score, AddPod and
// RemovePod they include the differences of the NodeInfo the framework passed (preemption's dry
// runs, nominated pods). The returned slices and Resources are shared: read them, never write them.
type NodeInfo interface {
	Name() string
	// Node is nil when the node is not in the snapshot.
	Node() *corev1.Node
	// ImageStates maps image names on this node to their size and spread; nil for an unknown node.
	// The map is shared with later calls: read it, never write it.
	ImageStates() map[string]ImageStateSummary

	// GetPods returns the pods on the node, assumed pods included (kube's NodeInfo.GetPods).
	GetPods() []PodInfo
	// PodsWithAffinity returns the pods with pod affinity or anti-affinity, required or preferred.
	PodsWithAffinity() []PodInfo
	// PodsWithRequiredAntiAffinity returns the pods with required pod anti-affinity.
	PodsWithRequiredAntiAffinity() []PodInfo
	// Requested is the sum of the pods' requests (kube's NodeInfo.Requested).
	Requested() *Resource
	// NonZeroRequested is Requested with kube's defaults for pods that request no CPU or memory.
	NonZeroRequested() *Resource
	// Allocatable is the node's allocatable resources.
	Allocatable() *Resource
}

// Resource is kube's framework.Resource: resource quantities as integers (CPU in millicores).
type Resource struct {
	MilliCPU         int64                         `json:"milliCPU"`
	Memory           int64                         `json:"memory"`
	EphemeralStorage int64                         `json:"ephemeralStorage"`
	AllowedPodNumber int                           `json:"allowedPodNumber"`
	ScalarResources  map[corev1.ResourceName]int64 `json:"scalarResources"`
}

// ResourceList is scheduler-plugins' util.ResourceList: cpu, memory, pods and ephemeral-storage always,
// then the scalar resources (hugepages in binary units, as kube's v1helper.IsHugePageResourceName says).
func (r *Resource) ResourceList() corev1.ResourceList {
	out := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(r.Memory, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(r.AllowedPodNumber), resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(r.EphemeralStorage, resource.BinarySI),
	}
	for name, v := range r.ScalarResources {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			out[name] = *resource.NewQuantity(v, resource.BinarySI)
		} else {
			out[name] = *resource.NewQuantity(v, resource.DecimalSI)
		}
	}
	return out
}

// ImageStateSummary is kube-scheduler's summary of an image on a node.
type ImageStateSummary struct {
	Size     int64
	NumNodes int
}

// NodeScore is one node's score in NormalizeScore.
type NodeScore struct {
	Name  string
	Score int64
}

// NodeToStatus holds the Filter codes of the nodes that failed; a node absent from it is
// UnschedulableAndUnresolvable (it was never tried).
type NodeToStatus map[string]Code

// Get returns the node's code with kube-scheduler's default for absent nodes.
func (m NodeToStatus) Get(node string) Code {
	if c, ok := m[node]; ok {
		return c
	}
	return UnschedulableAndUnresolvable
}

// NominatingMode says what PostFilter's nominated node name means.
type NominatingMode int32

const (
	ModeNoop NominatingMode = iota
	ModeOverride
)

// EnqueueExtensions lists the cluster events that may make a rejected pod schedulable. The ABI
// cannot express an empty list: the host then uses its default list (docs/abi.md §7).
type EnqueueExtensions interface {
	EventsToRegister() []ClusterEvent
}

// PreFilterPlugin runs first in every scheduling cycle. A non-empty nodeNames restricts the nodes
// evaluated to those.
type PreFilterPlugin interface {
	PreFilter(state CycleState, pod PodInfo) (nodeNames []string, status *Status)
}

// PreFilterExtensions keep PreFilter's state right while preemption adds and removes pods.
type PreFilterExtensions interface {
	AddPod(state CycleState, podToSchedule PodInfo, podToAdd PodInfo, nodeInfo NodeInfo) *Status
	RemovePod(state CycleState, podToSchedule PodInfo, podToRemove PodInfo, nodeInfo NodeInfo) *Status
}

// FilterPlugin says whether the pod fits a node.
type FilterPlugin interface {
	Filter(state CycleState, pod PodInfo, nodeInfo NodeInfo) *Status
}

// PostFilterPlugin runs when no node fits, e.g. to preempt.
type PostFilterPlugin interface {
	PostFilter(state CycleState, pod PodInfo, filteredNodeStatusMap NodeToStatus) (nominatedNodeName string,
		mode NominatingMode, status *Status)
}

// PreScorePlugin runs once before Score with the feasible nodes.
type PreScorePlugin interface {
	PreScore(state CycleState, pod PodInfo, nodes []NodeInfo) *Status
}

// ScorePlugin ranks a feasible node.
type ScorePlugin interface {
	Score(state CycleState, pod PodInfo, nodeInfo NodeInfo) (int64, *Status)
}

// ScoreExtensions rewrites the scores of all nodes after Score, in place.
type ScoreExtensions interface {
	NormalizeScore(state CycleState, pod PodInfo, scores []NodeScore) *Status
}

// ReservePlugin is told when a node is reserved for the pod and when that is undone.
type ReservePlugin interface {
	Reserve(state CycleState, pod PodInfo, nodeName string) *Status
	Unreserve(state CycleState, pod PodInfo, nodeName string)
}

// PermitPlugin may approve, deny or hold (Wait, with a timeout) the pod before binding.
type PermitPlugin interface {
	Permit(state CycleState, pod PodInfo, nodeName string) (*Status, time.Duration)
}

// PreBindPlugin runs before binding.
type PreBindPlugin interface {
	PreBind(state CycleState, pod PodInfo, nodeName string) *Status
}

// BindPlugin binds the pod; Skip passes to the next Bind plugin.
type BindPlugin interface {
	Bind(state CycleState, pod PodInfo, nodeName string) *Status
}

// PostBindPlugin is told when the pod was bound.
type PostBindPlugin interface {
	PostBind(state CycleState, pod PodInfo, nodeName string)
}
