package plugin

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/wasmsched/wasmsched/sdk/go/api"
)

const (
	// preFilterStateKey is the key in CycleState to InterPodAffinity pre-computed data for Filtering.
	preFilterStateKey = "PreFilter" + Name

	// ErrReasonExistingAntiAffinityRulesNotMatch is used for ExistingPodsAntiAffinityRulesNotMatch predicate error.
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	// ErrReasonAffinityRulesNotMatch is used for PodAffinityRulesNotMatch predicate error.
	ErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules"
	// ErrReasonAntiAffinityRulesNotMatch is used for PodAntiAffinityRulesNotMatch predicate error.
	ErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules"
)

// preFilterState is computed at PreFilter and used at Filter (kube's, with the
// InterPodAffinityHostnameFastPath gate off: every term is cluster-wide).
type preFilterState struct {
	// existingAntiAffinityCounts: topology pairs → number of existing pods whose required
	// anti-affinity terms match the incoming pod.
	existingAntiAffinityCounts topologyToMatchedTermCount
	// affinityCounts: topology pairs → number of existing pods matching all the incoming pod's
	// required affinity terms.
	affinityCounts topologyToMatchedTermCount
	// antiAffinityCounts: topology pairs → number of existing pods matching the incoming pod's
	// required anti-affinity terms.
	antiAffinityCounts topologyToMatchedTermCount
	// podInfo of the incoming pod.
	podInfo *podInfo
	// A copy of the incoming pod's namespace labels.
	namespaceLabels labels.Set
}

// Clone the prefilter state: preemption's dry runs change the copy (docs/abi.md §14.4).
func (s *preFilterState) Clone() api.StateData {
	if s == nil {
		return nil
	}
	copy := preFilterState{}
	copy.affinityCounts = s.affinityCounts.clone()
	copy.antiAffinityCounts = s.antiAffinityCounts.clone()
	copy.existingAntiAffinityCounts = s.existingAntiAffinityCounts.clone()
	// No need to deep copy the podInfo because it shouldn't change.
	copy.podInfo = s.podInfo
	copy.namespaceLabels = s.namespaceLabels
	return &copy
}

// updateWithPod updates the preFilterState counters with the (anti)affinity matches for the given podInfo.
func (s *preFilterState) updateWithPod(pInfo *podInfo, node *corev1.Node, multiplier int64) {
	if s == nil {
		return
	}
	s.existingAntiAffinityCounts.updateWithAntiAffinityTerms(pInfo.GetRequiredAntiAffinityTerms(), s.podInfo.GetPod(), s.namespaceLabels, node, multiplier)
	s.affinityCounts.updateWithAffinityTerms(s.podInfo.GetRequiredAffinityTerms(), pInfo.GetPod(), node, multiplier)
	// The incoming pod's terms have the namespaceSelector merged into the namespaces, and so
	// here we don't lookup the updated pod's namespace labels, hence passing nil for nsLabels.
	s.antiAffinityCounts.updateWithAntiAffinityTerms(s.podInfo.GetRequiredAntiAffinityTerms(), pInfo.GetPod(), nil, node, multiplier)
}

// A "topologyPair" represents a topology key and a topology value.
type topologyPair struct {
	key   string
	value string
}

// topologyToMatchedTermCount maps a topology pair to the number of existing pods that has
// pod affinity/anti-affinity terms that match the incoming pod.
type topologyToMatchedTermCount map[topologyPair]int64

func (m topologyToMatchedTermCount) merge(toMerge topologyToMatchedTermCount) {
	for pair, count := range toMerge {
		m[pair] += count
	}
}

func (m topologyToMatchedTermCount) clone() topologyToMatchedTermCount {
	copy := make(topologyToMatchedTermCount, len(m))
	copy.merge(m)
	return copy
}

func (m topologyToMatchedTermCount) update(node *corev1.Node, tk string, value int64) {
	if tv, ok := node.Labels[tk]; ok {
		pair := topologyPair{key: tk, value: tv}
		m[pair] += value
		// value could be negative, hence we delete the entry if it is down to zero.
		if m[pair] == 0 {
			delete(m, pair)
		}
	}
}

// updates the topologyToMatchedTermCount map with the specified value
// for each affinity term if "targetPod" matches ALL terms.
func (m topologyToMatchedTermCount) updateWithAffinityTerms(terms []AffinityTerm, pod *corev1.Pod, node *corev1.Node, value int64) {
	if podMatchesAllAffinityTerms(terms, pod) {
		for _, t := range terms {
			m.update(node, t.TopologyKey, value)
		}
	}
}

// updates the topologyToMatchedTermCount map with the specified value
// for each anti-affinity term matched the target pod.
func (m topologyToMatchedTermCount) updateWithAntiAffinityTerms(terms []AffinityTerm, pod *corev1.Pod, nsLabels labels.Set, node *corev1.Node, value int64) {
	// Check anti-affinity terms.
	for _, t := range terms {
		if t.Matches(pod, nsLabels) {
			m.update(node, t.TopologyKey, value)
		}
	}
}

// returns true IFF the given pod matches all the given terms.
func podMatchesAllAffinityTerms(terms []AffinityTerm, pod *corev1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		// The incoming pod NamespaceSelector was merged into the Namespaces set, and so
		// we are not explicitly passing in namespace labels.
		if !t.Matches(pod, nil) {
			return false
		}
	}
	return true
}

func podMatchesAnyAffinityTerms(terms []AffinityTerm, pod *corev1.Pod) bool {
	for _, t := range terms {
		if t.Matches(pod, nil) {
			return true
		}
	}
	return false
}

// calculates the following for each existing pod on each node:
//  1. Whether it has PodAntiAffinity
//  2. Whether any AntiAffinityTerm matches the incoming pod
func (pl *InterPodAffinity) getExistingAntiAffinityCounts(incomingPod *corev1.Pod, nsLabels labels.Set, nodes []api.NodeInfo) topologyToMatchedTermCount {
	result := make(topologyToMatchedTermCount)
	for _, nodeInfo := range nodes {
		node := nodeInfo.Node()
		for _, existingPod := range nodeInfo.PodsWithRequiredAntiAffinity() {
			for _, term := range pl.existing(existingPod).GetRequiredAntiAffinityTerms() {
				if term.Matches(incomingPod, nsLabels) {
					if tv, ok := node.Labels[term.TopologyKey]; ok {
						result[topologyPair{key: term.TopologyKey, value: tv}]++
					}
				}
			}
		}
	}
	return result
}

// finds existing Pods that match affinity terms of the incoming pod's (anti)affinity terms.
// It returns a topologyToMatchedTermCount that are checked later by the affinity
// predicate. With this topologyToMatchedTermCount available, the affinity predicate does not
// need to check all the pods in the cluster.
func (pl *InterPodAffinity) getIncomingAffinityAntiAffinityCounts(podInfo *podInfo, allNodes []api.NodeInfo) (topologyToMatchedTermCount, topologyToMatchedTermCount) {
	affinityCounts := make(topologyToMatchedTermCount)
	antiAffinityCounts := make(topologyToMatchedTermCount)
	if len(podInfo.GetRequiredAffinityTerms()) == 0 && len(podInfo.GetRequiredAntiAffinityTerms()) == 0 {
		return affinityCounts, antiAffinityCounts
	}
	for _, nodeInfo := range allNodes {
		node := nodeInfo.Node()
		for _, existingPod := range nodeInfo.GetPods() {
			affinityCounts.updateWithAffinityTerms(podInfo.GetRequiredAffinityTerms(), existingPod.Pod(), node, 1)
			// The incoming pod's terms have the namespaceSelector merged into the namespaces, and so
			// here we don't lookup the existing pod's namespace labels, hence passing nil for nsLabels.
			antiAffinityCounts.updateWithAntiAffinityTerms(podInfo.GetRequiredAntiAffinityTerms(), existingPod.Pod(), nil, node, 1)
		}
	}
	return affinityCounts, antiAffinityCounts
}

// PreFilter invoked at the prefilter extension point.
func (pl *InterPodAffinity) PreFilter(cycleState api.CycleState, pi api.PodInfo) ([]string, *api.Status) {
	pod := pi.Pod()
	allNodes, err := pl.sharedLister.NodeInfos().List()
	if err != nil {
		return nil, api.AsStatus(fmt.Errorf("failed to list NodeInfos: %w", err))
	}
	s := &preFilterState{}
	if s.podInfo, err = newPodInfo(pod); err != nil {
		return nil, api.NewStatus(api.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %+v", err))
	}

	for i := range s.podInfo.requiredAffinityTerms {
		if err := pl.mergeAffinityTermNamespacesIfNotEmpty(&s.podInfo.requiredAffinityTerms[i]); err != nil {
			return nil, api.AsStatus(err)
		}
	}
	for i := range s.podInfo.requiredAntiAffinityTerms {
		if err := pl.mergeAffinityTermNamespacesIfNotEmpty(&s.podInfo.requiredAntiAffinityTerms[i]); err != nil {
			return nil, api.AsStatus(err)
		}
	}
	s.namespaceLabels = pl.getNamespaceLabelsSnapshot(pod.Namespace)

	nodesWithRequiredAntiAffinityPods, err := pl.sharedLister.NodeInfos().HavePodsWithRequiredAntiAffinityList()
	if err != nil {
		return nil, api.AsStatus(fmt.Errorf("failed to list NodeInfos with pods with affinity: %w", err))
	}
	s.existingAntiAffinityCounts = pl.getExistingAntiAffinityCounts(pod, s.namespaceLabels, nodesWithRequiredAntiAffinityPods)
	s.affinityCounts, s.antiAffinityCounts = pl.getIncomingAffinityAntiAffinityCounts(s.podInfo, allNodes)

	if len(s.existingAntiAffinityCounts) == 0 && len(s.podInfo.GetRequiredAffinityTerms()) == 0 &&
		len(s.podInfo.GetRequiredAntiAffinityTerms()) == 0 {
		return nil, api.NewStatus(api.Skip)
	}

	cycleState.Write(preFilterStateKey, s)
	return nil, nil
}

// AddPod from pre-computed data in cycleState.
func (pl *InterPodAffinity) AddPod(cycleState api.CycleState, _ api.PodInfo, podInfoToAdd api.PodInfo, nodeInfo api.NodeInfo) *api.Status {
	state, err := getPreFilterState(cycleState)
	if err != nil {
		return api.AsStatus(err)
	}
	state.updateWithPod(pl.existing(podInfoToAdd), nodeInfo.Node(), 1)
	return nil
}

// RemovePod from pre-computed data in cycleState.
func (pl *InterPodAffinity) RemovePod(cycleState api.CycleState, _ api.PodInfo, podInfoToRemove api.PodInfo, nodeInfo api.NodeInfo) *api.Status {
	state, err := getPreFilterState(cycleState)
	if err != nil {
		return api.AsStatus(err)
	}
	state.updateWithPod(pl.existing(podInfoToRemove), nodeInfo.Node(), -1)
	return nil
}

func getPreFilterState(cycleState api.CycleState) (*preFilterState, error) {
	c, ok := cycleState.Read(preFilterStateKey)
	if !ok {
		// kube's CycleState.Read error is fwk.ErrNotFound, "not found".
		return nil, fmt.Errorf("error reading %q from cycleState: not found", preFilterStateKey)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to interpodaffinity.state error", c)
	}
	return s, nil
}

// Checks if scheduling the pod onto this node would break any anti-affinity
// terms indicated by the existing pods.
func satisfyExistingPodsAntiAffinity(state *preFilterState, nodeInfo api.NodeInfo) bool {
	if len(state.existingAntiAffinityCounts) > 0 {
		// Iterate over topology pairs to get any of the pods being affected by
		// the scheduled pod anti-affinity terms
		for topologyKey, topologyValue := range nodeInfo.Node().Labels {
			tp := topologyPair{key: topologyKey, value: topologyValue}
			if state.existingAntiAffinityCounts[tp] > 0 {
				return false
			}
		}
	}
	return true
}

// Checks if the node satisfies the incoming pod's anti-affinity rules.
func satisfyPodAntiAffinity(state *preFilterState, nodeInfo api.NodeInfo) bool {
	if len(state.antiAffinityCounts) > 0 {
		for _, term := range state.podInfo.GetRequiredAntiAffinityTerms() {
			if topologyValue, ok := nodeInfo.Node().Labels[term.TopologyKey]; ok {
				tp := topologyPair{key: term.TopologyKey, value: topologyValue}
				if state.antiAffinityCounts[tp] > 0 {
					return false
				}
			}
		}
	}
	return true
}

// Checks if the node satisfies the incoming pod's affinity rules.
func satisfyPodAffinity(state *preFilterState, nodeInfo api.NodeInfo) bool {
	podsExist := true
	for _, term := range state.podInfo.GetRequiredAffinityTerms() {
		if topologyValue, ok := nodeInfo.Node().Labels[term.TopologyKey]; ok {
			tp := topologyPair{key: term.TopologyKey, value: topologyValue}
			if state.affinityCounts[tp] <= 0 {
				podsExist = false
			}
		} else {
			// All topology labels must exist on the node.
			return false
		}
	}

	if !podsExist {
		// This pod may be the first pod in a series that have affinity to themselves. In order
		// to not leave such pods in pending state forever, we check that if no other pod
		// in the cluster matches the namespace and selector of this pod, the pod matches
		// its own terms, and the node has all the requested topologies, then we allow the pod
		// to pass the affinity check.
		if len(state.affinityCounts) == 0 && podMatchesAllAffinityTerms(state.podInfo.GetRequiredAffinityTerms(), state.podInfo.GetPod()) {
			return true
		}
		return false
	}
	return true
}

// Filter invoked at the filter extension point.
// It checks if a pod can be scheduled on the specified node with pod affinity/anti-affinity configuration.
func (pl *InterPodAffinity) Filter(cycleState api.CycleState, _ api.PodInfo, nodeInfo api.NodeInfo) *api.Status {
	state, err := getPreFilterState(cycleState)
	if err != nil {
		return api.AsStatus(err)
	}
	if !satisfyPodAffinity(state, nodeInfo) {
		return api.NewStatus(api.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	}
	if !satisfyPodAntiAffinity(state, nodeInfo) {
		return api.NewStatus(api.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	}
	if !satisfyExistingPodsAntiAffinity(state, nodeInfo) {
		return api.NewStatus(api.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
	}
	return nil
}
