//go:build !wasip1

package guest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
	"github.com/wasmsched/wasmsched/sdk/go/internal/wire"
)

func withAffinity(p *corev1.Pod, requiredAnti bool) *corev1.Pod {
	term := corev1.PodAffinityTerm{TopologyKey: "zone"}
	p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term}}}}
	if requiredAnti {
		p.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}
	}
	return p
}

func names(nodes []api.NodeInfo) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name())
	}
	return out
}

func podNames(pods []api.PodInfo) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Pod().Name)
	}
	sort.Strings(out)
	return out
}

func podKeys(pods []api.PodInfo) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.(*mirrorPod).key)
	}
	sort.Strings(out)
	return out
}

// filterReads runs Filter with a plugin whose Filter runs read, as a host call would.
func filterReads(t *testing.T, read func(api.CycleState, api.PodInfo, api.NodeInfo)) {
	t.Helper()
	setPlugin(t, &fakePlugin{filter: func(s api.CycleState, p api.PodInfo, n api.NodeInfo) *api.Status {
		read(s, p, n)
		return nil
	}})
	Filter()
}

func TestMirrorRecords(t *testing.T) {
	h := install(t, &hosttest.Host{})
	n1, n2 := newNode("n1"), newNode("n2")
	a, b := newPod("ns", "a", "ua"), withAffinity(newPod("ns", "b", "ub"), true)
	hosttest.SetSnapshot(t, h, hosttest.SnapshotNode{Node: n1, Pods: []*corev1.Pod{a, b}},
		hosttest.SnapshotNode{Node: n2})
	ms := Sync()
	if got := names(ms.List()); !slices.Equal(got, []string{"n1", "n2"}) {
		t.Fatalf("nodes %v", got)
	}
	m1 := ms.nodes["n1"]
	if got := podKeys(m1.GetPods()); !slices.Equal(got, []string{"ua", "ub"}) {
		t.Fatalf("pods %v", got)
	}
	if got := podKeys(m1.PodsWithAffinity()); !slices.Equal(got, []string{"ub"}) {
		t.Fatalf("with affinity %v", got)
	}
	if got := names(ms.HavePodsWithRequiredAntiAffinityList()); !slices.Equal(got, []string{"n1"}) {
		t.Fatalf("nodes with anti-affinity %v", got)
	}

	// The next call: b loses its affinity (replaced), a leaves, c comes on n2, then n1 goes.
	c := newPod("ns", "c", "uc")
	var v []byte
	v = wire.AppendPod(append(v, 1), "n1", "ub", 0, hosttest.PodBytes(t, newPod("ns", "b", "ub")))
	v = wire.AppendPodGone(v, "n1", "ua")
	v2 := wire.AppendPod([]byte{0}, "n2", "uc", 0, hosttest.PodBytes(t, c))
	h.SnapshotChanges = [][]byte{v, v2}
	beginCall()
	Sync()
	if h.Calls["handle.snapshot.changes"] != 3 {
		t.Fatalf("changes asked %d times, want 3 (one chunk with more=1, then more=0)", h.Calls["handle.snapshot.changes"])
	}
	if got := podKeys(m1.GetPods()); !slices.Equal(got, []string{"ub"}) {
		t.Fatalf("n1 pods after change %v", got)
	}
	if len(m1.PodsWithAffinity()) != 0 || len(ms.HavePodsWithAffinityList()) != 0 {
		t.Fatalf("b's replacement has no affinity, but the lists kept it")
	}
	if got := podKeys(ms.nodes["n2"].GetPods()); !slices.Equal(got, []string{"uc"}) {
		t.Fatalf("n2 pods %v", got)
	}

	h.SnapshotChanges = [][]byte{wire.AppendNodeGone([]byte{0}, "n1")}
	beginCall()
	Sync()
	if got := names(ms.List()); !slices.Equal(got, []string{"n2"}) || ms.nodes["n1"] != nil || ms.podNode["ub"] != nil {
		t.Fatalf("after NODE_GONE: nodes %v, pod index %v", got, ms.podNode)
	}

	// RESET forgets everything first.
	h.SnapshotChanges = [][]byte{wire.AppendNode([]byte{0, wire.Reset}, "n3", hosttest.NodeBytes(t, newNode("n3")), nil)}
	beginCall()
	Sync()
	if got := names(mirror.List()); !slices.Equal(got, []string{"n3"}) {
		t.Fatalf("after RESET: %v", got)
	}
}

func TestMirrorPodMovesBetweenNodes(t *testing.T) {
	h := install(t, &hosttest.Host{})
	hosttest.SetSnapshot(t, h, hosttest.SnapshotNode{Node: newNode("n1"), Pods: []*corev1.Pod{newPod("ns", "a", "ua")}},
		hosttest.SnapshotNode{Node: newNode("n2")})
	Sync()
	h.SnapshotChanges = [][]byte{wire.AppendPod([]byte{0}, "n2", "ua", 0, hosttest.PodBytes(t, newPod("ns", "a", "ua")))}
	beginCall()
	Sync()
	if len(mirror.nodes["n1"].GetPods()) != 0 || len(mirror.nodes["n2"].GetPods()) != 1 {
		t.Fatal("a pod sent on another node stayed on its old node too")
	}
}

func TestMirrorCursorTooSmall(t *testing.T) {
	h := install(t, &hosttest.Host{})
	var pods []*corev1.Pod
	for i := range 5 {
		pods = append(pods, bigPod(fmt.Sprintf("p%d", i)))
	}
	hosttest.SetSnapshot(t, h, hosttest.SnapshotNode{Node: newNode("n1"), Pods: pods})
	if len(h.SnapshotChanges[0]) <= minScratch {
		t.Fatalf("the value must not fit the scratch buffer: %d bytes", len(h.SnapshotChanges[0]))
	}
	Sync()
	// One too-small call that consumed nothing, the fitting retry, and none after (more=0).
	if h.Calls["handle.snapshot.changes"] != 2 || len(h.SnapshotChanges) != 0 {
		t.Fatalf("%d calls, %d values left", h.Calls["handle.snapshot.changes"], len(h.SnapshotChanges))
	}
	if got := len(mirror.nodes["n1"].GetPods()); got != 5 {
		t.Fatalf("%d pods, want 5", got)
	}
	// The pods own their bytes: the scratch buffer being reused does not change them.
	clear(scratch)
	if got := podNames(mirror.nodes["n1"].GetPods()); got[0] != "p0" {
		t.Fatalf("pods %v", got)
	}
}

func TestMirrorMalformedPanics(t *testing.T) {
	h := install(t, &hosttest.Host{})
	h.SnapshotChanges = [][]byte{wire.AppendPod([]byte{0}, "nope", "k", 0, nil)}
	if msg := mustPanic(t, func() { Sync() }); !strings.Contains(msg, "before the node") {
		t.Fatalf("panic %q", msg)
	}
	beginCall()
	h.SnapshotChanges = [][]byte{{0, wire.Node, 9, 0}}
	if msg := mustPanic(t, func() { Sync() }); !strings.Contains(msg, "truncated") {
		t.Fatalf("panic %q", msg)
	}
}

func TestSyncOncePerCallAndOnlyWhenRead(t *testing.T) {
	h := install(t, &hosttest.Host{CurrentNodeName: "n1"})
	hosttest.SetSnapshot(t, h, hosttest.SnapshotNode{Node: newNode("n1"), Pods: []*corev1.Pod{newPod("ns", "a", "ua")}})
	filterReads(t, func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) { _ = n.Name() })
	if h.Calls["handle.snapshot.changes"] != 0 {
		t.Fatal("a Filter that reads no pods pulled the snapshot")
	}
	filterReads(t, func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) {
		_ = n.GetPods()
		_ = n.PodsWithAffinity()
		_ = n.Requested()
	})
	if h.Calls["handle.snapshot.changes"] != 1 {
		t.Fatalf("pulled %d times in one call, want 1", h.Calls["handle.snapshot.changes"])
	}
	filterReads(t, func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) { _ = n.GetPods() })
	if h.Calls["handle.snapshot.changes"] != 2 {
		t.Fatalf("the next call did not pull (got %d calls)", h.Calls["handle.snapshot.changes"])
	}
}

func TestPodsDecodedOnlyWhenRead(t *testing.T) {
	h := install(t, &hosttest.Host{CurrentNodeName: "n1"})
	var pods []*corev1.Pod
	for i := range 10 {
		pods = append(pods, withAffinity(newPod("ns", fmt.Sprintf("p%d", i), fmt.Sprintf("u%d", i)), i%2 == 0))
	}
	hosttest.SetSnapshot(t, h, hosttest.SnapshotNode{Node: newNode("n1"), Pods: pods})
	before := PodsDecoded
	filterReads(t, func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) {
		if len(n.GetPods()) != 10 || len(n.PodsWithAffinity()) != 10 || len(n.PodsWithRequiredAntiAffinity()) != 5 {
			t.Errorf("pods %d, with affinity %d, with required anti-affinity %d", len(n.GetPods()),
				len(n.PodsWithAffinity()), len(n.PodsWithRequiredAntiAffinity()))
		}
		lister := mirror
		_ = lister.HavePodsWithAffinityList()
	})
	if PodsDecoded != before {
		t.Fatalf("%d pods decoded without Pod() being called", PodsDecoded-before)
	}
	filterReads(t, func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) {
		p := n.GetPods()[3]
		if p.Pod().Name != "p3" || p.Pod() != p.Pod() {
			t.Error("Pod() of the fourth pod")
		}
	})
	if PodsDecoded != before+1 {
		t.Fatalf("%d pods decoded, want 1", PodsDecoded-before)
	}
}

func TestSums(t *testing.T) {
	h := install(t, &hosttest.Host{CurrentNodeName: "n1"})
	n1 := newNode("n1")
	n1.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("110")}
	req := &api.Resource{MilliCPU: 1500, Memory: 100, ScalarResources: map[corev1.ResourceName]int64{"example.com/gpu": 2}}
	hosttest.SetSnapshot(t, h, hosttest.SnapshotNode{Node: n1, Requested: req})
	filterReads(t, func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) {
		if r := n.Requested(); r.MilliCPU != 1500 || r.Memory != 100 || r.ScalarResources["example.com/gpu"] != 2 {
			t.Errorf("requested %+v", r)
		}
		if a := n.Allocatable(); a.MilliCPU != 4000 || a.Memory != 1<<30 || a.AllowedPodNumber != 110 {
			t.Errorf("allocatable %+v", a)
		}
	})
}

func TestOverlay(t *testing.T) {
	h := install(t, &hosttest.Host{CurrentNodeName: "n1"})
	a, b, c := newPod("ns", "a", "ua"), newPod("ns", "b", "ub"), withAffinity(newPod("ns", "c", "uc"), true)
	hosttest.SetSnapshot(t, h, hosttest.SnapshotNode{Node: newNode("n1"), Pods: []*corev1.Pod{a, b}})
	h.Overlay = hosttest.Overlay(t, "n1", []*corev1.Pod{c}, []*corev1.Pod{a},
		&hosttest.NodeSums{Requested: api.Resource{MilliCPU: 7}})

	filterReads(t, func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) { _ = n.Node() })
	if h.Calls["handle.node_info.overlay"] != 0 {
		t.Fatal("the overlay was fetched by a Filter that reads no pods")
	}
	filterReads(t, func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) {
		if got := podKeys(n.GetPods()); !slices.Equal(got, []string{"ub", "uc"}) {
			t.Errorf("pods with overlay %v", got)
		}
		if got := podKeys(n.PodsWithRequiredAntiAffinity()); !slices.Equal(got, []string{"uc"}) {
			t.Errorf("anti-affinity pods with overlay %v", got)
		}
		if n.Requested().MilliCPU != 7 {
			t.Errorf("requested with overlay %+v", n.Requested())
		}
		// The snapshot's own node is unchanged.
		if got := podKeys(mirror.nodes["n1"].GetPods()); !slices.Equal(got, []string{"ua", "ub"}) {
			t.Errorf("the overlay changed the mirror: %v", got)
		}
	})
	if h.Calls["handle.node_info.overlay"] != 1 {
		t.Fatalf("overlay fetched %d times in one call", h.Calls["handle.node_info.overlay"])
	}

	// PreScore's NodeInfos are the snapshot's: no overlay there.
	h.FilteredNodeList = []byte(`["n1"]`)
	setPlugin(t, &fakePlugin{preScore: func(_ api.CycleState, _ api.PodInfo, nodes []api.NodeInfo) *api.Status {
		if got := podKeys(nodes[0].GetPods()); !slices.Equal(got, []string{"ua", "ub"}) {
			t.Errorf("PreScore's node %v", got)
		}
		return nil
	}})
	calls := h.Calls["handle.node_info.overlay"]
	PreScore()
	if h.Calls["handle.node_info.overlay"] != calls {
		t.Fatal("PreScore asked for an overlay")
	}

	h.Overlay = nil
	filterReads(t, func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) {
		if got := podKeys(n.GetPods()); !slices.Equal(got, []string{"ua", "ub"}) {
			t.Errorf("pods without overlay %v", got)
		}
	})
}

// counter is a StateData that AddPod changes.
type counter struct{ n int }

func (c *counter) Clone() api.StateData { return &counter{c.n} }

func TestCloneStates(t *testing.T) {
	h := install(t, &hosttest.Host{CurrentNodeName: "n1"})
	EnableClones()
	t.Cleanup(func() { stateID = nil })
	shared := &[]int{}
	var seen []int
	setPlugin(t, &fakePlugin{
		preFilter: func(s api.CycleState, _ api.PodInfo) ([]string, *api.Status) {
			s.Write("c", &counter{})
			s.Write("shared", shared)
			return nil, nil
		},
		addPod: func(s api.CycleState, _, _ api.PodInfo, _ api.NodeInfo) *api.Status {
			v, _ := s.Read("c")
			v.(*counter).n++
			return nil
		},
		filter: func(s api.CycleState, _ api.PodInfo, _ api.NodeInfo) *api.Status {
			v, _ := s.Read("c")
			seen = append(seen, v.(*counter).n)
			return nil
		},
	})
	PreFilter()
	Filter()
	if h.Calls["cycle_state.id"] != 0 {
		t.Fatal("Filter asked for the state id without any clone")
	}

	h.CycleStateID = 0
	if id := CloneState(); id != 1 {
		t.Fatalf("first clone id %d, want 1", id)
	}
	h.CycleStateID = 1
	AddPod()
	if id := CloneState(); id != 2 { // a clone of the clone
		t.Fatalf("second clone id %d", id)
	}
	h.CycleStateID = 2
	AddPod()
	for _, id := range []uint32{0, 1, 2} {
		h.CycleStateID = id
		Filter()
	}
	if !slices.Equal(seen, []int{0, 0, 1, 2}) {
		t.Fatalf("Filter saw counters %v, want [0 0 1 2]", seen)
	}
	s1, s0 := clones[1], cycleState
	v1, _ := s1.Read("shared")
	v0, _ := s0.Read("shared")
	if v1.(*[]int) != v0.(*[]int) {
		t.Fatal("a value that is not StateData was copied, not shared")
	}

	// Releases are read by the next clone; an unknown source is -1 with a reason.
	h.Released = []uint32{1, 2}
	h.CycleStateID = 2
	if id := CloneState(); id != -1 || !strings.Contains(h.StatusReason, "no cycle state 2") {
		t.Fatalf("clone of a released state: %d, %q", id, h.StatusReason)
	}
	if len(clones) != 0 {
		t.Fatalf("released clones kept: %v", clones)
	}

	// A new cycle: no clones, no id asked, ids never reused.
	h.CycleStateID = 0
	CloneState()
	PreFilter()
	calls := h.Calls["cycle_state.id"]
	Filter()
	if h.Calls["cycle_state.id"] != calls {
		t.Fatal("Filter asked for the state id after PreFilter dropped the clones")
	}
	if id := CloneState(); id != 4 {
		t.Fatalf("clone id %d after the next PreFilter, want 4 (ids are not reused)", id)
	}
}

func TestNominatedPods(t *testing.T) {
	install(t, &hosttest.Host{NominatedPods: map[string][][]byte{
		"n1": {hosttest.PodBytes(t, newPod("ns", "hi", "u1")), hosttest.PodBytes(t, newPod("ns", "lo", "u2"))}}})
	got := NominatedPodsForNode("n1")
	if len(got) != 2 || got[0].Pod().Name != "hi" || got[1].Pod().Name != "lo" {
		t.Fatalf("nominated pods %v", got)
	}
	if len(NominatedPodsForNode("n2")) != 0 {
		t.Fatal("n2 has no nominated pods")
	}
}

func TestRunFilterPluginsWithNominatedPodsIsReentrant(t *testing.T) {
	h := install(t, &hosttest.Host{CurrentNodeName: "n1"})
	hosttest.SetSnapshot(t, h, hosttest.SnapshotNode{Node: newNode("n1")})
	var inner, outer *api.Status
	depth := 0
	setPlugin(t, &fakePlugin{
		filter: func(s api.CycleState, _ api.PodInfo, n api.NodeInfo) *api.Status {
			depth++
			defer func() { depth-- }()
			if depth > 1 {
				return api.NewStatus(api.Unschedulable, "inner")
			}
			_ = n.GetPods()
			outer = RunFilterPluginsWithNominatedPods(s, n.Name())
			_ = n.GetPods() // the outer call's context survived the inner call
			if other := RunFilterPluginsWithNominatedPods(api.NewCycleState(), n.Name()); other.GetCode() != api.Error {
				t.Errorf("a foreign CycleState: %v, want Error", other)
			}
			return nil
		},
	})
	h.RunFilterWithNominatedPods = func(node string) (int32, string) {
		code := Filter() // the host calls the guest's filter re-entrantly
		inner = &api.Status{Code: api.Code(code), Reason: h.StatusReason}
		return code, h.StatusReason + " on " + node
	}
	if code := Filter(); code != 0 {
		t.Fatalf("outer Filter %d", code)
	}
	if inner.Code != api.Unschedulable || outer.GetCode() != api.Unschedulable || outer.Message() != "inner on n1" {
		t.Fatalf("inner %v, outer %v", inner, outer)
	}
	if h.Calls["handle.snapshot.changes"] != 1 {
		t.Fatalf("the outer call pulled the snapshot again after the inner call (%d)", h.Calls["handle.snapshot.changes"])
	}
}

func TestFetchU32(t *testing.T) {
	install(t, &hosttest.Host{CycleStateID: 7})
	if got := hostStateID(); got != 7 {
		t.Fatalf("%d", got)
	}
	if !bytes.Equal(hosttest.U32(7), binary.LittleEndian.AppendUint32(nil, 7)) {
		t.Fatal("U32")
	}
}
