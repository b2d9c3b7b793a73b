//go:build !wasip1

package plugin

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/framework"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

func TestNewArgs(t *testing.T) {
	if p := newPlugin(t, ""); p.hardPodAffinityWeight != 1 || p.ignorePreferredTermsOfExistingPods {
		t.Fatalf("defaults: weight %d, ignore %v", p.hardPodAffinityWeight, p.ignorePreferredTermsOfExistingPods)
	}
	p := newPlugin(t, `{"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": true}`)
	if p.hardPodAffinityWeight != 0 || !p.ignorePreferredTermsOfExistingPods {
		t.Fatalf("weight %d, ignore %v", p.hardPodAffinityWeight, p.ignorePreferredTermsOfExistingPods)
	}
	if _, err := New([]byte(`{"hardPodAffinityWeight": 101}`)); err == nil ||
		err.Error() != "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]" {
		t.Fatalf("weight 101: %v", err)
	}
	if _, err := New([]byte(`{`)); err == nil || !strings.Contains(err.Error(), "decoding guestConfig") {
		t.Fatalf("bad JSON: %v", err)
	}
}

func TestEventsToRegister(t *testing.T) {
	evs, err := newPlugin(t, "").EventsToRegister()
	if err != nil || len(evs) != 3 {
		t.Fatalf("%v %v", evs, err)
	}
	want := []framework.ClusterEvent{
		{Resource: framework.AssignedPod, ActionType: framework.Add | framework.UpdatePodLabel | framework.Delete},
		{Resource: framework.TargetPod, ActionType: framework.UpdatePodLabel},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel},
	}
	for i, e := range evs {
		if e.Event != want[i] || e.QueueingHintFn == nil {
			t.Errorf("event %d: %+v, want %+v with a hint", i, e.Event, want[i])
		}
	}
}

// Preemption's dry runs change a clone of the state (docs/abi.md §14.4): a victim removed with
// RemovePod from the clone lets the pod fit there, and PreFilter's state still rejects it.
func TestRemovePodChangesOnlyTheClone(t *testing.T) {
	victim := st.MakePod().Name("victim").UID("victim").Namespace("ns").Node("node1").Label("app", "db").Obj()
	pod := st.MakePod().Name("p").UID("p").Namespace("ns").
		PodAntiAffinityIn("app", "zone", []string{"db"}, st.PodAntiAffinityWithRequiredReq).Obj()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", Labels: map[string]string{"zone": "z1"}}}
	newHost(t, []*v1.Pod{victim}, []*v1.Node{node}, namespaces)
	p := newPlugin(t, "")
	state := api.NewCycleState()
	if _, s := p.PreFilter(state, api.PodOf(pod)); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	ni := nodeInfo(t, p, "node1")
	clone := state.Clone()
	if s := p.RemovePod(clone, api.PodOf(pod), api.PodOf(victim), ni); !s.IsSuccess() {
		t.Fatalf("RemovePod: %v", s)
	}
	if s := p.Filter(clone, api.PodOf(pod), ni); !s.IsSuccess() {
		t.Errorf("Filter on the clone without the victim: %v, want Success", s)
	}
	if s := p.Filter(state, api.PodOf(pod), ni); s.GetCode() != api.Unschedulable {
		t.Errorf("Filter on PreFilter's state: %v, want Unschedulable", s)
	}
	if s := p.AddPod(clone, api.PodOf(pod), api.PodOf(victim), ni); !s.IsSuccess() {
		t.Fatalf("AddPod: %v", s)
	}
	if s := p.Filter(clone, api.PodOf(pod), ni); s.GetCode() != api.Unschedulable {
		t.Errorf("Filter on the clone with the victim back: %v, want Unschedulable", s)
	}
}

// Existing pods' terms are parsed once per pod version, not per cycle, and PreFilter decodes only
// the pods it must: with no terms of its own, the incoming pod needs only the nodes with
// anti-affinity pods.
func TestPreFilterReadsOnlyPodsWithRequiredAntiAffinity(t *testing.T) {
	var pods []*v1.Pod
	for _, n := range []string{"a", "b", "c"} {
		pods = append(pods, st.MakePod().Name(n).UID(n).Namespace("ns").Node("node1").Obj())
	}
	anti := st.MakePod().Name("anti").UID("anti").Namespace("ns").Node("node1").
		PodAntiAffinityIn("app", "zone", []string{"web"}, st.PodAntiAffinityWithRequiredReq).Obj()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", Labels: map[string]string{"zone": "z1"}}}
	newHost(t, append(pods, anti), []*v1.Node{node}, namespaces)
	p := newPlugin(t, "")
	pod := st.MakePod().Name("p").Namespace("ns").Label("app", "web").Obj()
	if _, s := p.PreFilter(api.NewCycleState(), api.PodOf(pod)); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	if len(p.terms) != 1 {
		t.Fatalf("parsed the terms of %d pods, want 1 (the anti-affinity pod)", len(p.terms))
	}
}

// Without namespaces in args.watch the host fails the call (docs/abi.md §14.2).
func TestNamespacesMustBeWatched(t *testing.T) {
	h := newHost(t, nil, []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "node1"}}}, []runtime.Object{})
	delete(h.Objects, "/v1/namespaces")
	hosttest.NewCall()
	p := newPlugin(t, "")
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "namespaces is not in args.watch") {
			t.Fatalf("panic %v", r)
		}
	}()
	p.PreFilter(api.NewCycleState(), api.PodOf(st.MakePod().Name("p").Namespace("ns").Obj()))
}
