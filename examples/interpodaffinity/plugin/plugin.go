// Package plugin is kube-scheduler v1.37.2's InterPodAffinity
// (pkg/scheduler/framework/plugins/interpodaffinity) on the Go guest SDK's ABI v2: PreFilter with
// its PreFilterExtensions, Filter, PreScore, Score, NormalizeScore and EventsToRegister with
// queueing hints. The code follows kube's files (plugin.go, filtering.go, scoring.go) function by
// function; the differences are what the guest is given instead of kube's Handle:
//
//   - the snapshot is handle.SnapshotSharedLister() (the SDK's mirror, docs/abi.md §14.1);
//   - Namespaces are read through handle.Objects (namespaces must be in the plugin's args.watch,
//     §14.2), where kube uses the informer factory's namespace lister;
//   - the feature gates InterPodAffinityHostnameFastPath and
//     InPlacePodVerticalScalingSchedulerPreemption are alpha and off by default in 1.37, and a guest
//     cannot read the scheduler's gates, so the code of their disabled branches is what is ported;
//   - kube's Parallelizer runs the per-node loops in parallel; a guest has one thread, so they run
//     in order (the results are sums, so the order does not matter);
//   - SignPod (opportunistic batching's signatures) has no ABI and is left out.
package plugin

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/framework"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
)

// Name is the plugin's name in kube; a wasm plugin needs another (docs/abi.md §10's name clash),
// e.g. InterPodAffinityWasm, as in scheduler.yaml.
const Name = "InterPodAffinity"

// Namespaces is the resource the plugin reads through handle.Objects.
var Namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Args are kube's InterPodAffinityArgs, from the guestConfig JSON (same field names).
type Args struct {
	// HardPodAffinityWeight is the score weight of existing pods' required affinity terms
	// matching the incoming pod; 0..100, default 1.
	HardPodAffinityWeight *int32 `json:"hardPodAffinityWeight,omitempty"`
	// IgnorePreferredTermsOfExistingPods skips existing pods' preferred terms when the incoming
	// pod has no preferred terms of its own.
	IgnorePreferredTermsOfExistingPods bool `json:"ignorePreferredTermsOfExistingPods,omitempty"`
}

// InterPodAffinity checks and scores inter-pod affinity.
type InterPodAffinity struct {
	hardPodAffinityWeight              int32
	ignorePreferredTermsOfExistingPods bool
	sharedLister                       handle.SharedLister
	nsLister                           handle.ObjectLister
	terms                              map[api.PodInfo]*podInfo
}

// New decodes the args (kube's defaults and validation) and builds the plugin.
func New(config []byte) (*InterPodAffinity, error) {
	var args Args
	if len(config) > 0 {
		if err := json.Unmarshal(config, &args); err != nil {
			return nil, fmt.Errorf("%s: decoding guestConfig %q: %w", Name, config, err)
		}
	}
	w := int32(1) // kube's SetDefaults_InterPodAffinityArgs
	if args.HardPodAffinityWeight != nil {
		w = *args.HardPodAffinityWeight
	}
	// kube's ValidateInterPodAffinityArgs, with its text.
	if w < 0 || w > 100 {
		return nil, fmt.Errorf("hardPodAffinityWeight: Invalid value: %d: not in valid range [0, 100]", w)
	}
	return &InterPodAffinity{
		hardPodAffinityWeight:              w,
		ignorePreferredTermsOfExistingPods: args.IgnorePreferredTermsOfExistingPods,
		sharedLister:                       handle.SnapshotSharedLister(),
		nsLister:                           handle.Objects(Namespaces),
		terms:                              map[api.PodInfo]*podInfo{},
	}, nil
}

// EventsToRegister returns the possible events that may make a failed Pod schedulable.
func (pl *InterPodAffinity) EventsToRegister() ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		// All ActionType includes the following events:
		// - Delete. An unschedulable Pod may fail due to violating an existing Pod's anti-affinity constraints,
		// deleting an existing Pod may make it schedulable.
		// - UpdatePodLabel. Updating on an existing Pod's labels (e.g., removal) may make
		// an unschedulable Pod schedulable.
		// - Add. An unschedulable Pod may fail due to violating pod-affinity constraints,
		// adding an assigned Pod may make it schedulable.
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add | framework.UpdatePodLabel | framework.Delete}, QueueingHintFn: pl.isSchedulableAfterAssignedPodChange},
		{Event: framework.ClusterEvent{Resource: framework.TargetPod, ActionType: framework.UpdatePodLabel}, QueueingHintFn: pl.isSchedulableAfterTargetPodUpdateLabel},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

// mergeAffinityTermNamespacesIfNotEmpty updates Namespaces with the set of namespaces identified by
// NamespaceSelector. If successful, NamespaceSelector is set to nil (Nothing).
func (pl *InterPodAffinity) mergeAffinityTermNamespacesIfNotEmpty(at *AffinityTerm) error {
	if at.NamespaceSelector.Empty() {
		return nil
	}
	ns, err := pl.nsLister.List("", at.NamespaceSelector)
	if err != nil {
		return err
	}
	for _, n := range ns {
		at.Namespaces.Insert(n.GetName())
	}
	at.NamespaceSelector = labels.Nothing()
	return nil
}

// getNamespaceLabelsSnapshot returns a snapshot of the labels associated with the namespace; an
// empty set when it cannot be read (kube logs that at V(3), which a guest's klog has no level for).
func (pl *InterPodAffinity) getNamespaceLabelsSnapshot(ns string) labels.Set {
	podNS, err := pl.nsLister.Get("", ns)
	if err == nil {
		return labels.Merge(podNS.GetLabels(), nil)
	}
	return nil
}

// as is kube's util.As for the objects a hint gets.
func as[T any](oldObj, newObj any) (T, T, error) {
	var oldTyped, newTyped T
	var ok bool
	if newObj != nil {
		if newTyped, ok = newObj.(T); !ok {
			return oldTyped, newTyped, fmt.Errorf("expected %T, but got %T", newTyped, newObj)
		}
	}
	if oldObj != nil {
		if oldTyped, ok = oldObj.(T); !ok {
			return oldTyped, newTyped, fmt.Errorf("expected %T, but got %T", oldTyped, oldObj)
		}
	}
	return oldTyped, newTyped, nil
}

func (pl *InterPodAffinity) isSchedulableAfterAssignedPodChange(pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	originalPod, modifiedPod, err := as[*corev1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	// We don't need to check cases where NodeName or NominatedNodeName changes on a pod because in those cases Add/Delete event is fired
	if (modifiedPod != nil && modifiedPod.Spec.NodeName == "" && modifiedPod.Status.NominatedNodeName == "") ||
		(originalPod != nil && originalPod.Spec.NodeName == "" && originalPod.Status.NominatedNodeName == "") {
		return framework.QueueSkip, nil
	}

	terms, err := getAffinityTerms(pod, getPodAffinityTerms(pod.Spec.Affinity))
	if err != nil {
		return framework.Queue, err
	}
	antiTerms, err := getAffinityTerms(pod, getPodAntiAffinityTerms(pod.Spec.Affinity))
	if err != nil {
		return framework.Queue, err
	}

	// Pod is updated. Return Queue when the updated pod matching the target pod's affinity or not matching anti-affinity.
	// Note that, we don't need to check each affinity individually when the Pod has more than one affinity
	// because the current PodAffinity looks for a **single** existing pod that can satisfy **all** the terms of inter-pod affinity of an incoming pod.
	if modifiedPod != nil && originalPod != nil {
		if !podMatchesAllAffinityTerms(terms, originalPod) && podMatchesAllAffinityTerms(terms, modifiedPod) {
			return framework.Queue, nil
		}
		if podMatchesAnyAffinityTerms(antiTerms, originalPod) && !podMatchesAnyAffinityTerms(antiTerms, modifiedPod) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}

	// Pod is added. Return Queue when the added pod matching the target pod's affinity.
	if modifiedPod != nil {
		if podMatchesAllAffinityTerms(terms, modifiedPod) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}

	// Pod is deleted. Return Queue when the deleted pod matches the target pod's anti-affinity or vice versa.
	if podMatchesAnyAffinityTerms(antiTerms, originalPod) {
		return framework.Queue, nil
	}
	originalPodAntiTerms, err := getAffinityTerms(originalPod, getPodAntiAffinityTerms(originalPod.Spec.Affinity))
	if err != nil {
		return framework.Queue, err
	}
	if podMatchesAnyAffinityTerms(originalPodAntiTerms, pod) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

func (pl *InterPodAffinity) isSchedulableAfterTargetPodUpdateLabel(*corev1.Pod, any, any) (framework.QueueingHint, error) {
	// The pod can become schedulable after an update to its labels because e.g. some other
	// pod might have anti-affinity on the old labels but not on the new ones.
	return framework.Queue, nil
}

func (pl *InterPodAffinity) isSchedulableAfterNodeChange(pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	originalNode, modifiedNode, err := as[*corev1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}

	terms, err := getAffinityTerms(pod, getPodAffinityTerms(pod.Spec.Affinity))
	if err != nil {
		return framework.Queue, err
	}

	// When queuing this Pod:
	// - 1. A new node is added with the pod affinity topologyKey, the pod may become schedulable.
	// - 2. The original node does not have the pod affinity topologyKey but the modified node does, the pod may become schedulable.
	// - 3. Both the original and modified nodes have the pod affinity topologyKey and they differ, the pod may become schedulable.
	for _, term := range terms {
		if originalNode == nil {
			if _, ok := modifiedNode.Labels[term.TopologyKey]; ok {
				return framework.Queue, nil
			}
			continue
		}
		originalTopologyValue, originalHasKey := originalNode.Labels[term.TopologyKey]
		modifiedTopologyValue, modifiedHasKey := modifiedNode.Labels[term.TopologyKey]
		if !originalHasKey && modifiedHasKey {
			return framework.Queue, nil
		}
		if originalHasKey && modifiedHasKey && (originalTopologyValue != modifiedTopologyValue) {
			return framework.Queue, nil
		}
	}

	antiTerms, err := getAffinityTerms(pod, getPodAntiAffinityTerms(pod.Spec.Affinity))
	if err != nil {
		return framework.Queue, err
	}

	// When queuing this Pod:
	// - 1. A new node is added, the pod may become schedulable.
	// - 2. The original node have the pod anti-affinity topologyKey but the modified node does not, the pod may become schedulable.
	// - 3. Both the original and modified nodes have the pod anti-affinity topologyKey and they differ, the pod may become schedulable.
	for _, term := range antiTerms {
		if originalNode == nil {
			// Case 1: A new node is added; always requeue a Pod with anti-affinity (kube's reasons).
			return framework.Queue, nil
		}
		originalTopologyValue, originalHasKey := originalNode.Labels[term.TopologyKey]
		modifiedTopologyValue, modifiedHasKey := modifiedNode.Labels[term.TopologyKey]
		if originalHasKey && !modifiedHasKey {
			return framework.Queue, nil
		}
		if originalHasKey && modifiedHasKey && (originalTopologyValue != modifiedTopologyValue) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}
