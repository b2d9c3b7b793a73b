//go:build !wasip1

package guest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

// untouched is a status reason the host holds before a call; it stays if the guest sends none.
const untouched = "<not sent>"

func TestCycleStateEmptiedAtPreFilter(t *testing.T) {
	install(t, &hosttest.Host{CurrentNodeName: "n1"})
	var found bool
	var value any
	setPlugin(t, &fakePlugin{
		preScore: func(s api.CycleState, _ api.PodInfo, _ []api.NodeInfo) *api.Status {
			s.Write("k", 42)
			return nil
		},
		score: func(s api.CycleState, _ api.PodInfo, _ api.NodeInfo) (int64, *api.Status) {
			value, found = s.Read("k")
			return 0, nil
		},
	})

	PreFilter()
	PreScore()
	Score()
	if !found || value != 42 {
		t.Fatalf("Score read (%v, %v) after PreScore wrote 42", value, found)
	}
	if v, ok := State().Read("k"); !ok || v != 42 {
		t.Fatalf("State() does not hold the cycle's value: (%v, %v)", v, ok)
	}

	PreFilter()
	Score()
	if found {
		t.Fatalf("the next PreFilter kept %v in the CycleState", value)
	}
	if _, ok := State().Read("k"); ok {
		t.Fatal("State() still holds the value after PreFilter")
	}
}

func TestCycleStateSharedAcrossCallsOfACycle(t *testing.T) {
	install(t, &hosttest.Host{CurrentNodeName: "n1"})
	var states []api.CycleState
	rec := func(s api.CycleState) { states = append(states, s) }
	setPlugin(t, &fakePlugin{
		preFilter: func(s api.CycleState, _ api.PodInfo) ([]string, *api.Status) { rec(s); return nil, nil },
		filter:    func(s api.CycleState, _ api.PodInfo, _ api.NodeInfo) *api.Status { rec(s); return nil },
		reserve:   func(s api.CycleState, _ api.PodInfo, _ string) *api.Status { rec(s); return nil },
		postBind:  func(s api.CycleState, _ api.PodInfo, _ string) { rec(s) },
	})
	PreFilter()
	Filter()
	Reserve()
	PostBind()
	states[0].Write("x", 1)
	for i, s := range states {
		if v, ok := s.Read("x"); !ok || v != 1 {
			t.Fatalf("call %d saw a different CycleState", i)
		}
	}
}

func TestStatusReasonOnlyForFailures(t *testing.T) {
	cases := []struct {
		name   string
		status *api.Status
		code   int32
		reason string
	}{
		{"nil", nil, 0, untouched},
		{"success with reason", api.NewStatus(api.Success, "fine"), 0, untouched},
		{"unschedulable", api.NewStatus(api.Unschedulable, "a != b"), 2, "a != b"},
		{"joined reasons", api.NewStatus(api.UnschedulableAndUnresolvable, "x", "y"), 3, "x, y"},
		{"error without reason", api.NewStatus(api.Error), 1, untouched},
		{"skip", api.NewStatus(api.Skip, "skip me"), 5, "skip me"},
		{"min int32", &api.Status{Code: math.MinInt32, Reason: "low"}, math.MinInt32, "low"},
		{"max int32", &api.Status{Code: math.MaxInt32}, math.MaxInt32, untouched},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := install(t, &hosttest.Host{StatusReason: untouched})
			setPlugin(t, &fakePlugin{filter: func(api.CycleState, api.PodInfo, api.NodeInfo) *api.Status {
				return c.status
			}})
			if got := Filter(); got != c.code {
				t.Fatalf("Filter() = %d, want %d", got, c.code)
			}
			if h.StatusReason != c.reason {
				t.Fatalf("status reason %q, want %q", h.StatusReason, c.reason)
			}
		})
	}
}

func TestScorePacking(t *testing.T) {
	cases := []struct {
		name   string
		score  int64
		status *api.Status
		want   uint64
	}{
		{"100 success", 100, nil, 0x00000064_00000000},
		{"negative", -1, nil, 0xFFFFFFFF_00000000},
		{"unschedulable", 0, api.NewStatus(api.Unschedulable, "no"), 0x00000000_00000002},
		{"score and status", 7, api.NewStatus(api.Error, "e"), 0x00000007_00000001},
		{"max int32", math.MaxInt32, nil, 0x7FFFFFFF_00000000},
		{"above int32 clamps", 1 << 40, nil, 0x7FFFFFFF_00000000},
		{"max int64 clamps", math.MaxInt64, nil, 0x7FFFFFFF_00000000},
		{"below int32 clamps", -(1 << 40), nil, 0x80000000_00000000},
		{"min int64 clamps", math.MinInt64, nil, 0x80000000_00000000},
		{"2^32 does not wrap to 0", 1 << 32, nil, 0x7FFFFFFF_00000000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			install(t, &hosttest.Host{CurrentNodeName: "n1"})
			setPlugin(t, &fakePlugin{score: func(api.CycleState, api.PodInfo, api.NodeInfo) (int64, *api.Status) {
				return c.score, c.status
			}})
			got := Score()
			if got != c.want {
				t.Fatalf("Score() = %#016x, want %#016x", got, c.want)
			}
			// Unpacked as the host does (docs/abi.md §3).
			if hi := int32(got >> 32); int64(hi) != max(math.MinInt32, min(math.MaxInt32, c.score)) {
				t.Fatalf("host reads score %d", hi)
			}
		})
	}
}

func TestScoreSeesNodeName(t *testing.T) {
	install(t, &hosttest.Host{CurrentNodeName: "node-7"})
	var name string
	setPlugin(t, &fakePlugin{score: func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) (int64, *api.Status) {
		name = n.Name()
		return 0, nil
	}})
	Score()
	if name != "node-7" {
		t.Fatalf("Score saw node %q, want node-7", name)
	}
}

func TestPermitPacking(t *testing.T) {
	cases := []struct {
		name    string
		status  *api.Status
		timeout time.Duration
		want    uint64
	}{
		{"wait 10s", api.NewStatus(api.Wait), 10 * time.Second, 0x00000004_00002710},
		{"error no timeout", api.NewStatus(api.Error, "e"), 0, 0x00000001_00000000},
		{"success", nil, 0, 0},
		{"sub-millisecond truncates", api.NewStatus(api.Wait), 1500 * time.Microsecond, 0x00000004_00000001},
		{"negative timeout is 0", api.NewStatus(api.Wait), -time.Second, 0x00000004_00000000},
		{"max u32 ms", nil, math.MaxUint32 * time.Millisecond, 0x00000000_FFFFFFFF},
		{"beyond u32 clamps", api.NewStatus(api.Wait), 100 * 24 * time.Hour, 0x00000004_FFFFFFFF},
		{"2^32 ms does not wrap", api.NewStatus(api.Wait), (1 << 32) * time.Millisecond, 0x00000004_FFFFFFFF},
		{"negative code", &api.Status{Code: -2}, time.Millisecond, 0xFFFFFFFE_00000001},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			install(t, &hosttest.Host{CurrentNodeName: "n9"})
			var node string
			setPlugin(t, &fakePlugin{permit: func(_ api.CycleState, _ api.PodInfo, n string) (*api.Status,
				time.Duration) {
				node = n
				return c.status, c.timeout
			}})
			if got := Permit(); got != c.want {
				t.Fatalf("Permit() = %#016x, want %#016x", got, c.want)
			}
			if node != "n9" {
				t.Fatalf("Permit saw node %q, want n9", node)
			}
		})
	}
}

func TestPostFilter(t *testing.T) {
	h := install(t, &hosttest.Host{NodeToStatusMap: []byte(`{"n1":2,"n2":3}`), NominatedNodeName: "stale"})
	var seen api.NodeToStatus
	setPlugin(t, &fakePlugin{postFilter: func(_ api.CycleState, _ api.PodInfo, m api.NodeToStatus) (string,
		api.NominatingMode, *api.Status) {
		seen = m
		return "n1", api.ModeOverride, nil
	}})
	if got := PostFilter(); got != 0x00000001_00000000 {
		t.Fatalf("PostFilter() = %#016x, want Override/Success", got)
	}
	if h.NominatedNodeName != "n1" {
		t.Fatalf("nominated node %q, want n1", h.NominatedNodeName)
	}
	if want := (api.NodeToStatus{"n1": api.Unschedulable, "n2": api.UnschedulableAndUnresolvable}); !reflect.DeepEqual(seen, want) {
		t.Fatalf("plugin saw %v, want %v", seen, want)
	}
	if seen.Get("absent") != api.UnschedulableAndUnresolvable {
		t.Fatalf("absent node code %v", seen.Get("absent"))
	}

	h.StatusReason = untouched
	setPlugin(t, &fakePlugin{postFilter: func(api.CycleState, api.PodInfo, api.NodeToStatus) (string,
		api.NominatingMode, *api.Status) {
		return "", api.ModeNoop, api.NewStatus(api.UnschedulableAndUnresolvable, "nothing to preempt")
	}})
	if got := PostFilter(); got != 0x00000000_00000003 {
		t.Fatalf("PostFilter() = %#016x, want Noop/3", got)
	}
	if h.NominatedNodeName != "" {
		t.Fatalf("nominated node %q, want none", h.NominatedNodeName)
	}
	if h.StatusReason != "nothing to preempt" {
		t.Fatalf("reason %q", h.StatusReason)
	}
}

func TestPostFilterModePassedThrough(t *testing.T) {
	install(t, &hosttest.Host{})
	setPlugin(t, &fakePlugin{postFilter: func(api.CycleState, api.PodInfo, api.NodeToStatus) (string,
		api.NominatingMode, *api.Status) {
		return "", api.NominatingMode(-3), api.NewStatus(api.Error, "x")
	}})
	if got := PostFilter(); got != 0xFFFFFFFD_00000001 {
		t.Fatalf("PostFilter() = %#016x, want mode -3 / Error", got)
	}
}

func TestPreFilterNodeNames(t *testing.T) {
	h := install(t, &hosttest.Host{CurrentPod: hosttest.PodBytes(t, newPod("ns", "p", "u"))})
	var pod string
	setPlugin(t, &fakePlugin{preFilter: func(_ api.CycleState, p api.PodInfo) ([]string, *api.Status) {
		pod = p.Pod().Name
		return []string{"a", "node-b"}, nil
	}})
	if got := PreFilter(); got != 0 {
		t.Fatalf("PreFilter() = %d", got)
	}
	if want := "a\x00node-b\x00"; string(h.NodeNames) != want {
		t.Fatalf("node names %q, want %q", h.NodeNames, want)
	}
	if pod != "p" {
		t.Fatalf("PreFilter saw pod %q", pod)
	}
}

func TestPreFilterNoNamesSendsNothing(t *testing.T) {
	h := install(t, &hosttest.Host{StatusReason: untouched})
	setPlugin(t, &fakePlugin{preFilter: func(api.CycleState, api.PodInfo) ([]string, *api.Status) {
		return nil, api.NewStatus(api.Skip, "nothing to do")
	}})
	if got := PreFilter(); got != int32(api.Skip) {
		t.Fatalf("PreFilter() = %d, want Skip", got)
	}
	if h.NodeNames != nil {
		t.Fatalf("node names %q sent for an empty result", h.NodeNames)
	}
	if h.StatusReason != "nothing to do" {
		t.Fatalf("reason %q", h.StatusReason)
	}
}

// prescoreOnly implements PreScore but not PreFilter.
type prescoreOnly struct{}

func (prescoreOnly) PreScore(api.CycleState, api.PodInfo, []api.NodeInfo) *api.Status { return nil }

func TestPreFilterWithoutPreFilterPlugin(t *testing.T) {
	h := install(t, &hosttest.Host{CurrentPod: hosttest.PodBytes(t, newPod("ns", "p", "u"))})
	setPlugin(t, prescoreOnly{})
	State().Write("old", 1)
	if got := PreFilter(); got != 0 {
		t.Fatalf("PreFilter() = %d, want Success", got)
	}
	if _, ok := State().Read("old"); ok {
		t.Fatal("PreFilter kept the CycleState for a plugin without PreFilter")
	}
	if h.NodeNames != nil || h.Calls["currentPod"] != 0 {
		t.Fatalf("node names %q, currentPod calls %d", h.NodeNames, h.Calls["currentPod"])
	}
}

func TestPreScoreNodes(t *testing.T) {
	h := install(t, &hosttest.Host{
		FilteredNodeList: []byte(`["n2","n1"]`),
		Nodes:            map[string][]byte{"n1": hosttest.NodeBytes(t, newNode("n1"))},
	})
	var names []string
	setPlugin(t, &fakePlugin{preScore: func(_ api.CycleState, _ api.PodInfo, nodes []api.NodeInfo) *api.Status {
		for _, n := range nodes {
			names = append(names, n.Name())
		}
		if nodes[1].Node() == nil || nodes[1].Node().Name != "n1" {
			t.Errorf("n1 not resolved")
		}
		return nil
	}})
	PreScore()
	if want := []string{"n2", "n1"}; !slices.Equal(names, want) {
		t.Fatalf("PreScore saw %v, want %v", names, want)
	}
	if c := h.Calls["node"]; c != 1 {
		t.Fatalf("node asked %d times, want 1 (only the node used)", c)
	}
}

// TestScoreSeesPreScoresNodeInfos: the host scores the nodes PreScore got, in its order, and each
// Score sees the NodeInfo PreScore saw, so a node decoded in PreScore is not asked for again. A name
// out of that order, or after the next PreFilter, gets a NodeInfo of its own.
func TestScoreSeesPreScoresNodeInfos(t *testing.T) {
	h := install(t, &hosttest.Host{
		FilteredNodeList: []byte(`["n1","n2"]`),
		Nodes: map[string][]byte{"n1": hosttest.NodeBytes(t, newNode("n1")),
			"n2": hosttest.NodeBytes(t, newNode("n2"))},
	})
	var preScored []api.NodeInfo
	var last api.NodeInfo // the NodeInfo the last Score got
	scored := map[string]api.NodeInfo{}
	setPlugin(t, &fakePlugin{
		preScore: func(_ api.CycleState, _ api.PodInfo, nodes []api.NodeInfo) *api.Status {
			preScored = nodes
			for _, n := range nodes {
				n.Node()
			}
			return nil
		},
		score: func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) (int64, *api.Status) {
			if n.Node() == nil || n.Node().Name != n.Name() {
				t.Errorf("Score's node %q resolved to %v", n.Name(), n.Node())
			}
			scored[n.Name()], last = n, n
			return 0, nil
		},
	})
	PreFilter()
	PreScore()
	for _, name := range []string{"n1", "n2"} {
		h.CurrentNodeName = name
		Score()
	}
	if scored["n1"] != preScored[0] || scored["n2"] != preScored[1] {
		t.Fatalf("Score saw other NodeInfos than PreScore's")
	}
	if c := h.Calls["node"]; c != 2 {
		t.Fatalf("node asked %d times, want 2 (once per node, in PreScore)", c)
	}
	PreFilter()
	PreScore()
	h.CurrentNodeName = "n2" // scored out of PreScore's order: a NodeInfo of its own
	Score()
	if last == preScored[0] || last == preScored[1] || last.Name() != "n2" {
		t.Fatalf("an out-of-order Score reused PreScore's NodeInfo, or lost its name")
	}
	PreFilter() // a new cycle: nothing of the last PreScore is reused
	PreScore()
	first := preScored[0]
	PreFilter()
	h.CurrentNodeName = "n1"
	Score()
	if last == first {
		t.Fatalf("Score reused a NodeInfo of an earlier cycle")
	}
}

func TestPodAndNodeInfosAreValuesOfTheirOwn(t *testing.T) {
	install(t, &hosttest.Host{CurrentPod: hosttest.PodBytes(t, newPod("ns", "p", "u"))})
	seen := map[api.PodInfo]bool{}
	nodes := map[api.NodeInfo]string{}
	for i := 0; i < 3*podChunk; i++ {
		p := newCurrentPod()
		if seen[p] {
			t.Fatalf("PodInfo %d is one handed out before", i)
		}
		seen[p] = true
		name := fmt.Sprint("n", i)
		nodes[NewNodeInfo(name)] = name
	}
	for n, name := range nodes {
		if n.Name() != name {
			t.Fatalf("NodeInfo of %q now says %q", name, n.Name())
		}
	}
	if len(nodes) != 3*podChunk {
		t.Fatalf("%d distinct NodeInfos, want %d", len(nodes), 3*podChunk)
	}
}

func TestDecodeNamesReadsEveryArrayAsEncodingJSON(t *testing.T) {
	for _, raw := range []string{`[]`, `["n1"]`, `["n2","n1","node-3.example"]`, `[ "n1" , "n2" ]`,
		`["a\"b","c"]`, `["\u006e1"]`, `[""]`, `["n1",""]`} {
		got, err := decodeNames([]byte(raw))
		var want []string
		if werr := json.Unmarshal([]byte(raw), &want); werr != nil || err != nil {
			t.Fatalf("%s: %v / %v", raw, err, werr)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", raw, got, want)
		}
	}
	for _, raw := range []string{`["n1",]`, `["n1"`, `[n1]`, `{"n1":1}`} {
		if _, err := decodeNames([]byte(raw)); err == nil {
			t.Errorf("%s: no error", raw)
		}
	}
	if names, ok := splitNames([]byte(`["n2","n1"]`)); !ok || !slices.Equal(names, []string{"n2", "n1"}) {
		t.Fatalf("the plain array took the slow path: %q %v", names, ok)
	}
}

func TestNormalizeScoreKeepsHostOrderAndSendsEdits(t *testing.T) {
	h := install(t, &hosttest.Host{NodeScoreList: []byte(`{"n3":3,"n1":1,"n2":-2}`)})
	var seen []api.NodeScore
	setPlugin(t, &fakePlugin{normalize: func(_ api.CycleState, _ api.PodInfo, scores []api.NodeScore) *api.Status {
		seen = slices.Clone(scores)
		for i := range scores {
			scores[i].Score *= 10
		}
		return nil
	}})
	if got := NormalizeScore(); got != 0 {
		t.Fatalf("NormalizeScore() = %d", got)
	}
	if want := []api.NodeScore{{Name: "n3", Score: 3}, {Name: "n1", Score: 1}, {Name: "n2", Score: -2}}; !slices.Equal(seen, want) {
		t.Fatalf("plugin saw %v, want %v", seen, want)
	}
	var result map[string]int64
	if err := json.Unmarshal(h.NormalizedScoreList, &result); err != nil {
		t.Fatalf("result %q: %v", h.NormalizedScoreList, err)
	}
	if want := map[string]int64{"n3": 30, "n1": 10, "n2": -20}; !reflect.DeepEqual(result, want) {
		t.Fatalf("result %v, want %v", result, want)
	}
}

func TestNormalizeScoreEmptyList(t *testing.T) {
	h := install(t, &hosttest.Host{NodeScoreList: []byte(`{}`)})
	called := false
	setPlugin(t, &fakePlugin{normalize: func(_ api.CycleState, _ api.PodInfo, scores []api.NodeScore) *api.Status {
		called = true
		if len(scores) != 0 {
			t.Errorf("scores %v from {}", scores)
		}
		return api.NewStatus(api.Error, "bad")
	}})
	if got := NormalizeScore(); got != 1 {
		t.Fatalf("NormalizeScore() = %d, want 1", got)
	}
	if !called || string(h.NormalizedScoreList) != "{}" {
		t.Fatalf("called %v, result %q", called, h.NormalizedScoreList)
	}
	if h.StatusReason != "bad" {
		t.Fatalf("reason %q", h.StatusReason)
	}
}

func TestNormalizeScoreBadInputPanics(t *testing.T) {
	for _, raw := range []string{`[1,2]`, `{"n1":"x"}`, `{"n1":1.5}`} {
		install(t, &hosttest.Host{NodeScoreList: []byte(raw)})
		setPlugin(t, &fakePlugin{})
		msg := mustPanic(t, func() { NormalizeScore() })
		if !strings.Contains(msg, "nodeScoreList") {
			t.Fatalf("%s: panic %q does not name nodeScoreList", raw, msg)
		}
	}
}

func TestEnqueueWritesLittleEndianRecords(t *testing.T) {
	h := install(t, &hosttest.Host{})
	setPlugin(t, &fakePlugin{events: []api.ClusterEvent{
		{Resource: api.Node, ActionType: api.Add},
		{Resource: api.PersistentVolume, ActionType: api.Delete},
		{Resource: api.ResourceClaim, ActionType: api.All},
		{Resource: api.WildCard, ActionType: api.Update},
	}})
	Enqueue()
	want := []byte{
		1, 0, 0, 0, 1, 0, 0, 0,
		2, 0, 0, 0, 2, 0, 0, 0,
		5, 0, 0, 0, 63, 0, 0, 0,
		10, 0, 0, 0, 60, 0, 0, 0,
	}
	if !slices.Equal(h.ClusterEvents, want) {
		t.Fatalf("cluster events % x, want % x", h.ClusterEvents, want)
	}
	if h.Calls["currentPod"] != 0 {
		t.Fatal("enqueue asked for a pod")
	}
}

func TestAddRemovePodSeeBothPodsAndNode(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func() int32
	}{{"AddPod", AddPod}, {"RemovePod", RemovePod}} {
		t.Run(tc.name, func(t *testing.T) {
			h := install(t, &hosttest.Host{
				CurrentPod:      hosttest.PodBytes(t, newPod("ns", "scheduling", "u-s")),
				TargetPod:       hosttest.PodBytes(t, newPod("ns", "victim", "u-v")),
				CurrentNodeName: "n4",
				StatusReason:    untouched,
			})
			var cur, tgt, node string
			f := func(_ api.CycleState, p, target api.PodInfo, n api.NodeInfo) *api.Status {
				cur, tgt, node = p.Pod().Name, target.Pod().Name, n.Name()
				return api.NewStatus(api.Unschedulable, tc.name)
			}
			setPlugin(t, &fakePlugin{addPod: f, removePod: f})
			if got := tc.run(); got != 2 {
				t.Fatalf("%s() = %d, want 2", tc.name, got)
			}
			if cur != "scheduling" || tgt != "victim" || node != "n4" {
				t.Fatalf("saw pod %q, target %q, node %q", cur, tgt, node)
			}
			if h.StatusReason != tc.name {
				t.Fatalf("reason %q", h.StatusReason)
			}
		})
	}
}

func TestTargetPodCacheIsSeparate(t *testing.T) {
	h := install(t, &hosttest.Host{
		CurrentPod: hosttest.PodBytes(t, newPod("ns", "cur", "u1")),
		TargetPod:  hosttest.PodBytes(t, newPod("ns", "tgt", "u2")),
	})
	var got [2]string
	var pods []*corev1.Pod
	f := func(_ api.CycleState, p, target api.PodInfo, _ api.NodeInfo) *api.Status {
		got = [2]string{target.Pod().Name, p.Pod().Name}
		pods = append(pods, p.Pod())
		return nil
	}
	setPlugin(t, &fakePlugin{addPod: f})
	AddPod()
	h.TargetPod = hosttest.PodBytes(t, newPod("ns", "tgt2", "u3"))
	AddPod()
	if got != [2]string{"tgt2", "cur"} {
		t.Fatalf("second AddPod saw target %q, pod %q", got[0], got[1])
	}
	// Preemption alternates target pods; the pod being scheduled stays decoded once.
	if pods[0] != pods[1] {
		t.Fatal("a new targetPod evicted the decoded currentPod")
	}
}

func TestNodeNameExports(t *testing.T) {
	type call struct {
		name string
		run  func() int32
	}
	ret := func(f func()) func() int32 { return func() int32 { f(); return 0 } }
	var seenNode, seenPod string
	rec := func(p api.PodInfo, n string) { seenPod, seenNode = p.Pod().Name, n }
	fail := api.NewStatus(api.Unschedulable, "r")
	setPlugin(t, &fakePlugin{
		reserve:   func(_ api.CycleState, p api.PodInfo, n string) *api.Status { rec(p, n); return fail },
		unreserve: func(_ api.CycleState, p api.PodInfo, n string) { rec(p, n) },
		preBind:   func(_ api.CycleState, p api.PodInfo, n string) *api.Status { rec(p, n); return fail },
		bind:      func(_ api.CycleState, p api.PodInfo, n string) *api.Status { rec(p, n); return fail },
		postBind:  func(_ api.CycleState, p api.PodInfo, n string) { rec(p, n) },
		filter: func(_ api.CycleState, p api.PodInfo, n api.NodeInfo) *api.Status {
			rec(p, n.Name())
			return fail
		},
	})
	for _, c := range []call{
		{"Reserve", Reserve}, {"PreBind", PreBind}, {"Bind", Bind}, {"Filter", Filter},
		{"Unreserve", ret(Unreserve)}, {"PostBind", ret(PostBind)},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := install(t, &hosttest.Host{
				CurrentPod:      hosttest.PodBytes(t, newPod("ns", "pod-"+c.name, "u")),
				CurrentNodeName: "node-" + c.name,
				StatusReason:    untouched,
			})
			seenNode, seenPod = "", ""
			code := c.run()
			if seenNode != "node-"+c.name || seenPod != "pod-"+c.name {
				t.Fatalf("saw pod %q node %q", seenPod, seenNode)
			}
			void := c.name == "Unreserve" || c.name == "PostBind"
			if !void && (code != 2 || h.StatusReason != "r") {
				t.Fatalf("code %d reason %q, want 2 r", code, h.StatusReason)
			}
			if void && h.StatusReason != untouched {
				t.Fatalf("%s sent a reason %q", c.name, h.StatusReason)
			}
		})
	}
}

func TestNoPluginPanics(t *testing.T) {
	install(t, &hosttest.Host{})
	setPlugin(t, nil)
	msg := mustPanic(t, func() { Filter() })
	if !strings.Contains(msg, "plugin.Set") {
		t.Fatalf("panic %q does not tell how to register", msg)
	}
}

// ScoreNodes (docs/abi.md §17): one call scores every node of filteredNodeList with the NodeInfos PreScore
// built, and leaves one little-endian int64 per node at the address in its result's high half; the first
// failing node ends it with its status.
func TestScoreNodes(t *testing.T) {
	h := install(t, &hosttest.Host{
		FilteredNodeList: []byte(`["n1","n2","n3"]`),
		Nodes: map[string][]byte{"n1": hosttest.NodeBytes(t, newNode("n1")),
			"n2": hosttest.NodeBytes(t, newNode("n2")), "n3": hosttest.NodeBytes(t, newNode("n3"))},
	})
	var preScored []api.NodeInfo
	var seen []api.NodeInfo
	scores := map[string]int64{"n1": 7, "n2": -1, "n3": math.MaxInt64}
	var fail string
	setPlugin(t, &fakePlugin{
		preScore: func(_ api.CycleState, _ api.PodInfo, nodes []api.NodeInfo) *api.Status {
			preScored = nodes
			return nil
		},
		score: func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) (int64, *api.Status) {
			seen = append(seen, n)
			if n.Name() == fail {
				return 0, api.NewStatus(api.Error, "no score for "+n.Name())
			}
			return scores[n.Name()], nil
		},
	})
	PreFilter()
	PreScore()
	r := ScoreNodes()
	if code := int32(r); code != int32(api.Success) || uint32(r>>32) != address(scoreBuf) {
		t.Fatalf("ScoreNodes() = %#016x: status %d, address %#x; the scores are at %#x", r, code, r>>32,
			address(scoreBuf))
	}
	want := binary.LittleEndian.AppendUint64(nil, 7)
	want = binary.LittleEndian.AppendUint64(want, uint64(0xFFFFFFFF_FFFFFFFF))
	want = binary.LittleEndian.AppendUint64(want, math.MaxInt32) // clamped as Score's
	if !bytes.Equal(scoreBuf, want) {
		t.Fatalf("scores = %x, want %x", scoreBuf, want)
	}
	for i := range preScored {
		if seen[i] != preScored[i] {
			t.Fatalf("node %d: Score got another NodeInfo than PreScore's", i)
		}
	}

	// A failing node: its status is the call's, and no node after it is scored.
	seen, fail = nil, "n2"
	PreFilter()
	PreScore()
	if r := ScoreNodes(); r != uint64(api.Error) || h.StatusReason != "no score for n2" || len(seen) != 2 {
		t.Fatalf("after a failing node: ScoreNodes() = %#x, reason %q, %d nodes scored", r, h.StatusReason, len(seen))
	}

	// Another list than PreScore's: a node it also got keeps its NodeInfo only in PreScore's order.
	h.FilteredNodeList, seen, fail = []byte(`["n2"]`), nil, ""
	PreFilter()
	PreScore()
	h.FilteredNodeList = []byte(`["n2"]`)
	if r := ScoreNodes(); int32(r) != int32(api.Success) || len(seen) != 1 || seen[0] != preScored[0] {
		t.Fatalf("ScoreNodes() over PreScore's list [n2] = %#x, saw %d nodes", r, len(seen))
	}
	h.FilteredNodeList, seen = []byte(`["n1","n2","n3"]`), nil
	PreFilter()
	PreScore()
	h.FilteredNodeList = []byte(`["n3","n1"]`)
	if r := ScoreNodes(); int32(r) != int32(api.Success) || len(seen) != 2 || seen[0] == preScored[2] ||
		seen[0].Name() != "n3" || seen[1].Name() != "n1" {
		t.Fatalf("ScoreNodes() over another list = %#x, saw %d nodes", r, len(seen))
	}

	// Without PreScore (or another list than its), each node gets a NodeInfo of its own, by name.
	h.FilteredNodeList, seen = []byte(`["n3"]`), nil
	PreFilter()
	if r := ScoreNodes(); int32(r) != int32(api.Success) || len(seen) != 1 || seen[0].Name() != "n3" {
		t.Fatalf("ScoreNodes() without PreScore = %#x, saw %d nodes", r, len(seen))
	}
	if got := binary.LittleEndian.Uint64(scoreBuf); got != math.MaxInt32 {
		t.Fatalf("score of n3 = %d", got)
	}
}
