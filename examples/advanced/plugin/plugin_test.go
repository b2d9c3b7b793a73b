//go:build !wasip1

package plugin

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

const teamKey = "example.com/team"

func makeNode(name, team string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	if team != "" {
		n.Labels[teamKey] = team
	}
	return n
}

func makePod(name, team string, dedicatedOnly bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
		Labels: map[string]string{}, Annotations: map[string]string{}}}
	if team != "" {
		p.Labels["team"] = team
	}
	if dedicatedOnly {
		p.Annotations["example.com/dedicated-only"] = "true"
	}
	return p
}

// cluster: two ml nodes, one web node, two shared nodes, in this snapshot order.
var clusterNodes = []*corev1.Node{
	makeNode("ml-1", "ml"), makeNode("shared-1", ""), makeNode("web-1", "web"), makeNode("ml-2", "ml"),
	makeNode("shared-2", ""),
}

type fixture struct {
	t     *testing.T
	h     *hosttest.Host
	pl    *TeamPlacement
	nodes map[string]api.NodeInfo
}

// setup installs a fake host serving clusterNodes and builds the plugin from config.
func setup(t *testing.T, config string) *fixture {
	t.Helper()
	list := &corev1.NodeList{}
	nodes := map[string]api.NodeInfo{}
	for _, n := range clusterNodes {
		list.Items = append(list.Items, *n)
		nodes[n.Name] = api.NodeInfoOf(n, nil)
	}
	raw, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	h := hosttest.Install(t, &hosttest.Host{NodeList: raw})
	pl, err := New([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, h: h, pl: pl, nodes: nodes}
}

// preFilter runs PreFilter on a fresh CycleState, as the host does at the start of a cycle.
func (f *fixture) preFilter(pod *corev1.Pod) (api.CycleState, []string, *api.Status) {
	state := api.NewCycleState()
	names, s := f.pl.PreFilter(state, api.PodOf(pod))
	return state, names, s
}

func (f *fixture) mustPreFilter(pod *corev1.Pod) api.CycleState {
	f.t.Helper()
	state, _, s := f.preFilter(pod)
	if !s.IsSuccess() {
		f.t.Fatalf("PreFilter: %v", s)
	}
	return state
}

func (f *fixture) infos(names ...string) []api.NodeInfo {
	var out []api.NodeInfo
	for _, n := range names {
		out = append(out, f.nodes[n])
	}
	return out
}

func lastLog(t *testing.T, h *hosttest.Host) hosttest.LogRecord {
	t.Helper()
	if len(h.Logged) == 0 {
		t.Fatal("nothing logged")
	}
	return h.Logged[len(h.Logged)-1]
}

// kvs renders a structured log record's pairs as k=v, NUL list to text.
func kvs(r hosttest.LogRecord) string {
	parts := strings.Split(strings.TrimSuffix(string(r.KVs), "\x00"), "\x00")
	var out []string
	for i := 0; i+1 < len(parts); i += 2 {
		out = append(out, parts[i]+"="+parts[i+1])
	}
	return strings.Join(out, " ")
}

func TestPreFilter(t *testing.T) {
	tests := []struct {
		name          string
		config        string
		pod           *corev1.Pod
		wantNames     []string
		wantCode      api.Code
		wantReason    string
		wantTeam      string
		wantTeamNodes []string
		wantDedicated bool
		wantFrozen    bool
	}{
		{name: "team pod: nodes are not restricted", pod: makePod("p", "ml", false),
			wantTeam: "ml", wantTeamNodes: []string{"ml-1", "ml-2"}},
		{name: "dedicated-only pod: restricted to the team's nodes", pod: makePod("p", "ml", true),
			wantNames: []string{"ml-1", "ml-2"}, wantTeam: "ml", wantTeamNodes: []string{"ml-1", "ml-2"},
			wantDedicated: true},
		{name: "pod without team", pod: makePod("p", "", false)},
		{name: "pod without team, denyUnlabeled", config: `{"denyUnlabeled": true}`, pod: makePod("p", "", false),
			wantCode: api.UnschedulableAndUnresolvable, wantReason: `pod has no "team" label`},
		{name: "dedicated-only pod without team", pod: makePod("p", "", true), wantDedicated: true,
			wantCode:   api.UnschedulableAndUnresolvable,
			wantReason: `pod has annotation example.com/dedicated-only=true but no "team" label`},
		{name: "dedicated-only pod of a team without nodes", pod: makePod("p", "analytics", true),
			wantTeam: "analytics", wantDedicated: true,
			wantCode: api.UnschedulableAndUnresolvable, wantReason: `no node is dedicated to team "analytics"`},
		{name: "annotation turned off in the config", config: `{"dedicatedOnlyAnnotation": ""}`,
			pod: makePod("p", "analytics", true), wantTeam: "analytics"},
		{name: "frozen team passes PreFilter", config: `{"frozenTeams": ["web"]}`, pod: makePod("p", "web", false),
			wantTeam: "web", wantTeamNodes: []string{"web-1"}, wantFrozen: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t, tt.config)
			state, names, s := f.preFilter(tt.pod)
			if s.GetCode() != tt.wantCode || s.Message() != tt.wantReason {
				t.Errorf("status = %v, want %v %q", s, tt.wantCode, tt.wantReason)
			}
			if !slices.Equal(names, tt.wantNames) {
				t.Errorf("node names = %v, want %v", names, tt.wantNames)
			}
			st, err := getPreFilterState(state)
			if err != nil {
				t.Fatal(err)
			}
			if st.pod != "ns/p" || st.team != tt.wantTeam || !slices.Equal(st.teamNodes, tt.wantTeamNodes) ||
				st.dedicatedOnly != tt.wantDedicated || st.frozen != tt.wantFrozen {
				t.Errorf("state = %+v", st)
			}
			wantNodeTeams := map[string]string{"ml-1": "ml", "ml-2": "ml", "web-1": "web", "shared-1": "", "shared-2": ""}
			if !reflect.DeepEqual(st.nodeTeams, wantNodeTeams) {
				t.Errorf("nodeTeams = %v, want %v", st.nodeTeams, wantNodeTeams)
			}
			if n := f.h.Calls["nodeList"]; n != 1 {
				t.Errorf("nodeList fetched %d times, want once per cycle", n)
			}
			if r := lastLog(t, f.h); r.Msg != "TeamPlacement: prefilter" || !strings.HasPrefix(kvs(r), "pod=ns/p team="+tt.wantTeam) {
				t.Errorf("log = %q %q", r.Msg, kvs(r))
			}
		})
	}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name       string
		pod        *corev1.Pod
		node       api.NodeInfo
		wantCode   api.Code
		wantReason string
	}{
		{name: "own team's node", pod: makePod("p", "ml", false), node: api.NodeInfoOf(clusterNodes[0], nil)},
		{name: "shared node", pod: makePod("p", "ml", false), node: api.NodeInfoOf(clusterNodes[1], nil)},
		{name: "another team's node", pod: makePod("p", "ml", false), node: api.NodeInfoOf(clusterNodes[2], nil),
			wantCode: api.UnschedulableAndUnresolvable, wantReason: ErrReasonOtherTeam},
		{name: "pod without team on a dedicated node", pod: makePod("p", "", false),
			node:     api.NodeInfoOf(clusterNodes[3], nil),
			wantCode: api.UnschedulableAndUnresolvable, wantReason: ErrReasonOtherTeam},
		{name: "pod without team on a shared node", pod: makePod("p", "", false),
			node: api.NodeInfoOf(clusterNodes[4], nil)},
		{name: "dedicated-only pod on a shared node", pod: makePod("p", "ml", true),
			node:     api.NodeInfoOf(clusterNodes[1], nil),
			wantCode: api.UnschedulableAndUnresolvable, wantReason: ErrReasonShared},
		{name: "dedicated-only pod on its team's node", pod: makePod("p", "ml", true),
			node: api.NodeInfoOf(clusterNodes[3], nil)},
		// A node PreFilter did not see: its labels decide.
		{name: "unseen node of the team", pod: makePod("p", "web", false),
			node: api.NodeInfoOf(makeNode("web-9", "web"), nil)},
		{name: "unseen node of another team", pod: makePod("p", "ml", false),
			node:     api.NodeInfoOf(makeNode("web-9", "web"), nil),
			wantCode: api.UnschedulableAndUnresolvable, wantReason: ErrReasonOtherTeam},
		{name: "unknown node", pod: makePod("p", "ml", false), node: api.NodeInfoOf(nil, nil),
			wantCode: api.UnschedulableAndUnresolvable, wantReason: "node not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t, "")
			state := f.mustPreFilter(tt.pod)
			s := f.pl.Filter(state, api.PodOf(tt.pod), tt.node)
			if s.GetCode() != tt.wantCode || s.Message() != tt.wantReason {
				t.Errorf("Filter = %v, want %v %q", s, tt.wantCode, tt.wantReason)
			}
		})
	}
	t.Run("without PreFilter state", func(t *testing.T) {
		f := setup(t, "")
		s := f.pl.Filter(api.NewCycleState(), api.PodOf(makePod("p", "ml", false)), f.nodes["ml-1"])
		if s.GetCode() != api.Error || !strings.Contains(s.Message(), "PreFilterTeamPlacement") {
			t.Errorf("Filter = %v, want an Error naming the state key", s)
		}
	})
}

func TestPreScoreAndScore(t *testing.T) {
	t.Run("team pod: its nodes preferred", func(t *testing.T) {
		f := setup(t, `{"preferredScore": 90, "sharedScore": 10}`)
		pod := api.PodOf(makePod("p", "ml", false))
		state := f.mustPreFilter(pod.Pod())
		if s := f.pl.PreScore(state, pod, f.infos("ml-1", "shared-1", "shared-2")); !s.IsSuccess() {
			t.Fatalf("PreScore = %v", s)
		}
		got := map[string]int64{}
		for _, n := range []string{"ml-1", "shared-1", "shared-2"} {
			score, s := f.pl.Score(state, pod, f.nodes[n])
			if !s.IsSuccess() {
				t.Fatalf("Score(%s) = %v", n, s)
			}
			got[n] = score
		}
		if want := map[string]int64{"ml-1": 90, "shared-1": 10, "shared-2": 10}; !reflect.DeepEqual(got, want) {
			t.Errorf("scores = %v, want %v", got, want)
		}
		// ml-2 was not feasible: PreScore's state does not count it as a team node.
		if score, _ := f.pl.Score(state, pod, f.nodes["ml-2"]); score != 10 {
			t.Errorf("Score(ml-2) = %d, want 10: not among PreScore's feasible nodes", score)
		}
	})
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		feasible []string
	}{
		{"pod without team skips", makePod("p", "", false), []string{"shared-1", "shared-2"}},
		{"no feasible node of the team skips", makePod("p", "web", false), []string{"shared-1", "shared-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, "")
			state := f.mustPreFilter(tc.pod)
			if s := f.pl.PreScore(state, api.PodOf(tc.pod), f.infos(tc.feasible...)); !s.IsSkip() {
				t.Errorf("PreScore = %v, want Skip", s)
			}
			if _, ok := state.Read(preScoreStateKey); ok {
				t.Error("PreScore wrote its state although it skipped")
			}
		})
	}
	t.Run("without PreFilter state", func(t *testing.T) {
		f := setup(t, "")
		if s := f.pl.PreScore(api.NewCycleState(), api.PodOf(makePod("p", "ml", false)), nil); s.GetCode() != api.Error {
			t.Errorf("PreScore = %v, want Error", s)
		}
	})
	t.Run("Score without PreScore state", func(t *testing.T) {
		f := setup(t, "")
		pod := makePod("p", "ml", false)
		state := f.mustPreFilter(pod)
		if _, s := f.pl.Score(state, api.PodOf(pod), f.nodes["ml-1"]); s.GetCode() != api.Error ||
			!strings.Contains(s.Message(), "PreScoreTeamPlacement") {
			t.Errorf("Score = %v, want an Error naming the state key", s)
		}
	})
}

func TestReserveUnreserve(t *testing.T) {
	f := setup(t, "")
	pod := api.PodOf(makePod("p", "ml", false))
	state := f.mustPreFilter(pod.Pod())

	for _, tc := range []struct {
		node      string
		dedicated bool
	}{{"ml-2", true}, {"shared-2", false}} {
		if s := f.pl.Reserve(state, pod, tc.node); !s.IsSuccess() {
			t.Fatalf("Reserve = %v", s)
		}
		v, ok := state.Read(reservationKey)
		if !ok || *v.(*reservation) != (reservation{node: tc.node, dedicated: tc.dedicated}) {
			t.Errorf("reservation = %+v, want %s dedicated=%v", v, tc.node, tc.dedicated)
		}
		if r := lastLog(t, f.h); r.Msg != "TeamPlacement: reserve" ||
			kvs(r) != "pod=ns/p node="+tc.node+" dedicated="+map[bool]string{true: "true", false: "false"}[tc.dedicated] {
			t.Errorf("log = %q %q", r.Msg, kvs(r))
		}
	}

	f.pl.Unreserve(state, pod, "shared-2")
	if _, ok := state.Read(reservationKey); ok {
		t.Error("Unreserve left the reservation")
	}
	if r := lastLog(t, f.h); r.Msg != "TeamPlacement: unreserve" || kvs(r) != "pod=ns/p node=shared-2 hadReservation=true" {
		t.Errorf("log = %q %q", r.Msg, kvs(r))
	}
	// A second Unreserve is harmless.
	f.pl.Unreserve(state, pod, "shared-2")
	if r := lastLog(t, f.h); kvs(r) != "pod=ns/p node=shared-2 hadReservation=false" {
		t.Errorf("log = %q", kvs(r))
	}
	// The PreFilter state is untouched.
	if _, err := getPreFilterState(state); err != nil {
		t.Error(err)
	}

	t.Run("without PreFilter state", func(t *testing.T) {
		if s := f.pl.Reserve(api.NewCycleState(), pod, "ml-1"); s.GetCode() != api.Error {
			t.Errorf("Reserve = %v, want Error", s)
		}
	})
}

func TestPermit(t *testing.T) {
	const config = `{"frozenTeams": ["web"]}`
	t.Run("allowed", func(t *testing.T) {
		f := setup(t, config)
		pod := api.PodOf(makePod("p", "ml", false))
		state := f.mustPreFilter(pod.Pod())
		f.pl.Reserve(state, pod, "ml-1")
		s, timeout := f.pl.Permit(state, pod, "ml-1")
		if !s.IsSuccess() || timeout != 0 {
			t.Errorf("Permit = %v, %v; want Success, 0", s, timeout)
		}
		if r := lastLog(t, f.h); r.Msg != "TeamPlacement: permit" || kvs(r) != "pod=ns/p node=ml-1 decision=allow" {
			t.Errorf("log = %q %q", r.Msg, kvs(r))
		}
	})
	t.Run("frozen team denied", func(t *testing.T) {
		f := setup(t, config)
		pod := api.PodOf(makePod("p", "web", false))
		state := f.mustPreFilter(pod.Pod())
		f.pl.Reserve(state, pod, "web-1")
		s, timeout := f.pl.Permit(state, pod, "web-1")
		if s.GetCode() != api.Unschedulable || s.Message() != `node(s) not permitted: team "web" is frozen` || timeout != 0 {
			t.Errorf("Permit = %v, %v; want Unschedulable, 0", s, timeout)
		}
		if r := lastLog(t, f.h); kvs(r) != "pod=ns/p node=web-1 decision=deny" {
			t.Errorf("log = %q", kvs(r))
		}
	})
	t.Run("pod without team is never frozen", func(t *testing.T) {
		f := setup(t, config)
		pod := api.PodOf(makePod("p", "", false))
		state := f.mustPreFilter(pod.Pod())
		f.pl.Reserve(state, pod, "shared-1")
		if s, _ := f.pl.Permit(state, pod, "shared-1"); !s.IsSuccess() {
			t.Errorf("Permit = %v", s)
		}
	})
	t.Run("needs the reservation of this node", func(t *testing.T) {
		f := setup(t, config)
		pod := api.PodOf(makePod("p", "ml", false))
		state := f.mustPreFilter(pod.Pod())
		if s, _ := f.pl.Permit(state, pod, "ml-1"); s.GetCode() != api.Error {
			t.Errorf("Permit without Reserve = %v, want Error", s)
		}
		f.pl.Reserve(state, pod, "ml-1")
		if s, _ := f.pl.Permit(state, pod, "ml-2"); s.GetCode() != api.Error ||
			s.Message() != `no reservation for node "ml-2" in cycleState` {
			t.Errorf("Permit for another node = %v, want Error", s)
		}
		f.pl.Unreserve(state, pod, "ml-1")
		if s, _ := f.pl.Permit(state, pod, "ml-1"); s.GetCode() != api.Error {
			t.Errorf("Permit after Unreserve = %v, want Error", s)
		}
	})
	t.Run("without PreFilter state", func(t *testing.T) {
		f := setup(t, config)
		if s, _ := f.pl.Permit(api.NewCycleState(), api.PodOf(makePod("p", "ml", false)), "ml-1"); s.GetCode() != api.Error {
			t.Errorf("Permit = %v, want Error", s)
		}
	})
}

type objectReference struct{ Kind, APIVersion, Name, Namespace, UID, ResourceVersion string }

type event struct {
	RegardingReference, RelatedReference objectReference
	Eventtype, Reason, Action, Note      string
}

func decodeEvents(t *testing.T, h *hosttest.Host) []event {
	t.Helper()
	var out []event
	for _, raw := range h.Events {
		var e event
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestPostBind(t *testing.T) {
	for _, tc := range []struct {
		name, team, node, wantNote, wantKVs string
	}{
		{"dedicated node", "ml", "ml-2",
			"team ml: bound to dedicated node ml-2; team nodes seen in PreFilter: ml-1,ml-2",
			"pod=ns/p node=ml-2 team=ml placement=dedicated"},
		{"team pod on a shared node", "web", "shared-1",
			"team web: bound to shared node shared-1; team nodes seen in PreFilter: web-1",
			"pod=ns/p node=shared-1 team=web placement=shared"},
		{"team without nodes", "analytics", "shared-2",
			"team analytics: bound to shared node shared-2; team nodes seen in PreFilter: none",
			"pod=ns/p node=shared-2 team=analytics placement=shared"},
		{"pod without team", "", "shared-2", "no team: bound to shared node shared-2",
			"pod=ns/p node=shared-2 team= placement=shared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, "")
			pod := api.PodOf(makePod("p", tc.team, false))
			state := f.mustPreFilter(pod.Pod())
			f.pl.Reserve(state, pod, tc.node)
			f.pl.PostBind(state, pod, tc.node)
			want := event{
				RegardingReference: objectReference{Kind: "Pod", APIVersion: "v1", Name: "p", Namespace: "ns", UID: "uid-p"},
				RelatedReference:   objectReference{Kind: "Node", APIVersion: "v1", Name: tc.node},
				Eventtype:          "Normal", Reason: "TeamPlaced", Action: "Binding", Note: tc.wantNote,
			}
			if got := decodeEvents(t, f.h); len(got) != 1 || got[0] != want {
				t.Errorf("events = %+v, want [%+v]", got, want)
			}
			if r := lastLog(t, f.h); r.Msg != "TeamPlacement: postbind" || kvs(r) != tc.wantKVs {
				t.Errorf("log = %q %q", r.Msg, kvs(r))
			}
		})
	}
	t.Run("a note with % is not a format string", func(t *testing.T) {
		f := setup(t, "")
		pod := api.PodOf(makePod("p", "ml", false))
		state := f.mustPreFilter(pod.Pod())
		f.pl.Reserve(state, pod, "%d")
		f.pl.PostBind(state, pod, "%d")
		if got := decodeEvents(t, f.h); len(got) != 1 || !strings.Contains(got[0].Note, "shared node %d;") {
			t.Errorf("events = %+v", got)
		}
	})
	t.Run("without state: error log, no event", func(t *testing.T) {
		f := setup(t, "")
		pod := api.PodOf(makePod("p", "ml", false))
		f.pl.PostBind(api.NewCycleState(), pod, "ml-1")
		state := f.mustPreFilter(pod.Pod()) // no Reserve
		f.pl.PostBind(state, pod, "ml-1")
		if len(f.h.Events) != 0 {
			t.Errorf("events = %q", f.h.Events)
		}
		var errs []string
		for _, r := range f.h.Logged {
			if r.Severity == 2 {
				errs = append(errs, r.Msg+" "+kvs(r))
			}
		}
		want := []string{
			`TeamPlacement: postbind err=reading "PreFilterTeamPlacement" from cycleState: not found`,
			"TeamPlacement: postbind err=no reservation in cycleState pod=ns/p",
		}
		if !slices.Equal(errs, want) {
			t.Errorf("error logs = %q, want %q", errs, want)
		}
	})
}

// TestCycle runs whole cycles in the host's order on one CycleState: the state PreFilter computes
// reaches PostBind, and a Permit denial ends with Unreserve.
func TestCycle(t *testing.T) {
	f := setup(t, `{"frozenTeams": ["web"]}`)

	schedule := func(p *corev1.Pod) (api.CycleState, string, *api.Status) {
		pod := api.PodOf(p)
		state, names, s := f.preFilter(p)
		if !s.IsSuccess() {
			return state, "", s
		}
		candidates := names
		if candidates == nil {
			for _, n := range clusterNodes {
				candidates = append(candidates, n.Name)
			}
		}
		var feasible []api.NodeInfo
		for _, n := range candidates {
			if s := f.pl.Filter(state, pod, f.nodes[n]); s.IsSuccess() {
				feasible = append(feasible, f.nodes[n])
			}
		}
		best, bestScore := feasible[0].Name(), int64(-1)
		if s := f.pl.PreScore(state, pod, feasible); !s.IsSkip() {
			for _, ni := range feasible {
				if score, _ := f.pl.Score(state, pod, ni); score > bestScore {
					best, bestScore = ni.Name(), score
				}
			}
		}
		if s := f.pl.Reserve(state, pod, best); !s.IsSuccess() {
			t.Fatalf("Reserve: %v", s)
		}
		if s, _ := f.pl.Permit(state, pod, best); !s.IsSuccess() {
			f.pl.Unreserve(state, pod, best)
			return state, best, s
		}
		// Another pod's cycle may run in between on other instances; this one's state stays.
		f.pl.PostBind(state, pod, best)
		return state, best, nil
	}

	_, node, s := schedule(makePod("train", "ml", false))
	if !s.IsSuccess() || node != "ml-1" {
		t.Errorf("ml pod: %v on %q, want ml-1", s, node)
	}
	_, node, s = schedule(makePod("batch", "", false))
	if !s.IsSuccess() || node != "shared-1" {
		t.Errorf("pod without team: %v on %q, want shared-1", s, node)
	}
	state, node, s := schedule(makePod("front", "web", false))
	if s.GetCode() != api.Unschedulable || node != "web-1" {
		t.Errorf("frozen web pod: %v on %q, want Unschedulable at web-1", s, node)
	}
	if _, ok := state.Read(reservationKey); ok {
		t.Error("reservation left after the denial")
	}
	_, _, s = schedule(makePod("etl", "analytics", true))
	if s.GetCode() != api.UnschedulableAndUnresolvable {
		t.Errorf("dedicated-only pod of a team without nodes: %v", s)
	}

	var notes []string
	for _, e := range decodeEvents(t, f.h) {
		notes = append(notes, e.RegardingReference.Name+": "+e.Note)
	}
	want := []string{
		"train: team ml: bound to dedicated node ml-1; team nodes seen in PreFilter: ml-1,ml-2",
		"batch: no team: bound to shared node shared-1",
	}
	if !slices.Equal(notes, want) {
		t.Errorf("events = %q, want %q", notes, want)
	}
}
