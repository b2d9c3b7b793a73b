package main

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

// explain evaluates the pod as schedulePod/findNodesThatFitPod/prioritizeNodes do, with the framework's
// own runners on a fresh CycleState, but over every node of the snapshot (kube may stop filtering once
// it has enough feasible nodes) and keeping every node's status and every plugin's score.
func explain(ctx context.Context, fw framework.Framework, snapshot *internalcache.Snapshot, pod *corev1.Pod) (*Attempt, error) {
	a := &Attempt{
		Pod:     podKey(pod),
		Profile: fw.ProfileName(),
		Filter:  map[string]any{},
		Scores:  map[string]map[string]int64{},
		Best:    []string{},
	}
	nodes, err := snapshot.ListNodesInPlacement()
	if err != nil {
		return nil, err
	}
	a.PreFilter = PreFilterRecord{Code: fwk.Success.String(), Reasons: []string{}}
	if len(nodes) == 0 {
		return a, nil // kube fails with ErrNoNodesAvailable before PreFilter
	}
	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())

	preRes, status, unschedulable := fw.RunPreFilterPlugins(ctx, state, pod)
	a.PreFilter.Code = status.Code().String()
	if status != nil { // a nil *Status is Success
		a.PreFilter.Plugin = status.Plugin()
		a.PreFilter.Reasons = append(a.PreFilter.Reasons, status.Reasons()...)
	}
	if !preRes.AllNodes() {
		a.PreFilter.NodeNames = sets.List(preRes.NodeNames)
	}
	if !status.IsSuccess() {
		for _, n := range nodes {
			a.Filter[n.Node().Name] = statusRecord(status)
		}
		return a, nil
	}

	// The nominated node is tried first; when it passes, kube looks at no other node. When it fails, its
	// status stays in the Diagnosis even if PreFilterResult leaves the node out (evaluateNominatedNode).
	nnn := pod.Status.NominatedNodeName
	var nominatedStatus *fwk.Status
	if nnn != "" {
		if ni, err := snapshot.GetNodeInPlacement(nnn); err == nil {
			s := fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if s.IsSuccess() {
				a.Filter[nnn] = "ok"
				a.Best = []string{nnn}
				return a, nil
			}
			nominatedStatus = s
			// Diagnosis.AddPluginStatus on kube's own plugin set, which the absent-nodes message below
			// is formatted from.
			if s.IsRejected() && s.Plugin() != "" {
				if unschedulable == nil {
					unschedulable = sets.New[string]()
				}
				unschedulable.Insert(s.Plugin())
			}
		}
	}

	var outside *fwk.Status
	if !preRes.AllNodes() {
		outside = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedulable)))
	}
	var feasible []fwk.NodeInfo
	for _, n := range nodes {
		name := n.Node().Name
		if outside != nil && !preRes.NodeNames.Has(name) {
			if name == nnn && nominatedStatus != nil {
				a.Filter[name] = statusRecord(nominatedStatus)
			} else {
				a.Filter[name] = statusRecord(outside)
			}
			continue
		}
		s := fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, n)
		if s.IsSuccess() {
			a.Filter[name] = "ok"
			feasible = append(feasible, n)
		} else {
			a.Filter[name] = statusRecord(s)
		}
	}
	switch {
	case len(feasible) == 0:
		return a, nil
	case len(feasible) == 1:
		a.Best = []string{feasible[0].Node().Name}
		return a, nil
	}

	var scores []fwk.NodePluginScores
	if !fw.HasScorePlugins() {
		for _, n := range feasible {
			scores = append(scores, fwk.NodePluginScores{Name: n.Node().Name, TotalScore: 1})
		}
	} else {
		if s := fw.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
			return a, nil // kube's cycle ends in an error status; the failure handler records it
		}
		var s *fwk.Status
		scores, s = fw.RunScorePlugins(ctx, state, pod, feasible)
		if !s.IsSuccess() {
			return a, nil
		}
	}
	maxTotal := int64(math.MinInt64)
	for _, ns := range scores {
		per := map[string]int64{"total": ns.TotalScore}
		for _, ps := range ns.Scores {
			per[ps.Name] = ps.Score
		}
		a.Scores[ns.Name] = per
		maxTotal = max(maxTotal, ns.TotalScore)
	}
	for _, ns := range scores {
		if ns.TotalScore == maxTotal {
			a.Best = append(a.Best, ns.Name)
		}
	}
	sort.Strings(a.Best)
	return a, nil
}

// tieBreaker sits in front of DefaultPreemption's preemption.Interface. It makes the plugin's choices
// that kube leaves to chance deterministic, and records the tie set:
//   - the dry run starts at node offset 0 instead of a random one;
//   - SelectCandidate gets pickOneNodeForPreemption's default criteria (with the "latest start time"
//     one made deterministic) plus a last one preferring the lexicographically smallest node name, so
//     kube picks min(tie set) where it would pick the first of a map's random order.
type tieBreaker struct {
	preemption.Interface
	record func(nodes []string)
	// wanted is the number of candidates kube's dry run would stop at (GetOffsetAndNumCandidates).
	wanted int
}

// GetOffsetAndNumCandidates makes the dry run look at every potential node. kube stops after `wanted`
// candidates, but it walks the potential nodes in Go map order (NodeToStatus.NodesForStatusCode), so
// which candidates it finds is chance; OrderedScoreFuncs records every node such a walk could pick.
func (t *tieBreaker) GetOffsetAndNumCandidates(nodes int32) (int32, int32) {
	_, n := t.Interface.GetOffsetAndNumCandidates(nodes)
	t.wanted = int(n)
	if n == 0 {
		// minCandidateNodesPercentage rounds down to no candidate: kube's candidate lists hold none.
		return 0, 0
	}
	return 0, nodes
}

func (t *tieBreaker) OrderedScoreFuncs(ctx context.Context, nodesToVictims map[string]*extenderv1.Victims) []func(node string) int64 {
	funcs := t.Interface.OrderedScoreFuncs(ctx, nodesToVictims)
	if len(funcs) == 0 {
		funcs = defaultPreemptionScoreFuncs(nodesToVictims, time.Now())
	}
	names := make([]string, 0, len(nodesToVictims))
	for n := range nodesToVictims {
		names = append(names, n)
	}
	sort.Strings(names)
	t.record(possiblePicks(names, funcs, nodesToVictims, t.wanted))
	rank := make(map[string]int64, len(names))
	for i, n := range names {
		rank[n] = int64(i)
	}
	return append(funcs, func(node string) int64 { return -rank[node] })
}

// possiblePicks is every candidate kube could nominate when its dry run stops after `wanted` candidates
// found in a random order: a set S of found candidates ends once it has `wanted` members and one of them
// violates no PDB (else it grows to all). A node is picked from S when no member of S beats it. So a node
// can be picked if no candidate at all beats it, or if it violates no PDB and at least wanted-1 other
// candidates do not beat it (they can be the rest of S).
func possiblePicks(candidates []string, funcs []func(string) int64, nodesToVictims map[string]*extenderv1.Victims, wanted int) []string {
	better := func(a, b string) bool { // a beats b by the criteria, in order
		for _, f := range funcs {
			if fa, fb := f(a), f(b); fa != fb {
				return fa > fb
			}
		}
		return false
	}
	var out []string
	for _, c := range candidates {
		notBeaten := 0
		beaten := false
		for _, x := range candidates {
			if x == c {
				continue
			}
			if better(x, c) {
				beaten = true
			} else {
				notBeaten++
			}
		}
		if !beaten || (nodesToVictims[c].NumPDBViolations == 0 && notBeaten >= wanted-1) {
			out = append(out, c)
		}
	}
	return out
}

// defaultPreemptionScoreFuncs are pickOneNodeForPreemption's criteria. The last one in kube reads the
// victims' status.startTime, and util.GetPodStartTime takes time.Now() for a pod that has none, on
// every call: nodes whose senior victims have not started then compare by the order kube happens to
// evaluate them. Here every such pod has the same "now", so those nodes tie.
func defaultPreemptionScoreFuncs(nodesToVictims map[string]*extenderv1.Victims, now time.Time) []func(string) int64 {
	return []func(string) int64{
		func(node string) int64 { return -nodesToVictims[node].NumPDBViolations },
		func(node string) int64 { return -int64(corev1helpers.PodPriority(nodesToVictims[node].Pods[0])) },
		func(node string) int64 {
			var sum int64
			for _, pod := range nodesToVictims[node].Pods {
				sum += int64(corev1helpers.PodPriority(pod)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(node string) int64 { return -int64(len(nodesToVictims[node].Pods)) },
		func(node string) int64 { return earliestStartTime(nodesToVictims[node].Pods, now).UnixNano() },
	}
}

// earliestStartTime is util.GetEarliestPodStartTime with a fixed now for pods that have not started.
func earliestStartTime(pods []*corev1.Pod, now time.Time) time.Time {
	if len(pods) == 0 {
		return time.Unix(0, math.MinInt64)
	}
	start := func(p *corev1.Pod) time.Time {
		if p.Status.StartTime != nil {
			return p.Status.StartTime.Time
		}
		return now
	}
	earliest, maxPriority := start(pods[0]), corev1helpers.PodPriority(pods[0])
	for _, p := range pods {
		switch prio := corev1helpers.PodPriority(p); {
		case prio == maxPriority && start(p).Before(earliest):
			earliest = start(p)
		case prio > maxPriority:
			maxPriority, earliest = prio, start(p)
		}
	}
	return earliest
}
