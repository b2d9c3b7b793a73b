// Package plugin is TeamPlacement, an example that uses every extension point of a scheduling and
// binding cycle and carries per-pod state through CycleState from PreFilter to PostBind.
//
// Nodes may be dedicated to a team with a node label (example.com/team=ml); nodes without it are
// shared. Pods name their team with a pod label (team=ml). Then:
//
//   - PreFilter reads the pod's team and the snapshot's nodes once, and keeps which node belongs to
//     which team in CycleState. A pod annotated example.com/dedicated-only=true is restricted to its
//     team's nodes (a PreFilterResult); if the team has none, the pod is unschedulable right away.
//   - Filter rejects nodes dedicated to another team (and shared nodes for dedicated-only pods),
//     from the PreFilter state, without fetching each node from the host.
//   - PreScore keeps the feasible nodes of the pod's team (or skips scoring when there are none);
//     Score gives them preferredScore and shared nodes sharedScore.
//   - Reserve records the reserved node in CycleState; Unreserve removes it.
//   - Permit denies pods of teams under a change freeze (frozenTeams) and checks the reservation.
//   - PostBind logs and records an event with the team nodes PreFilter found: the state survived
//     into the binding cycle.
//
// Kept apart from package main so that go test runs it natively.
package plugin

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
	"github.com/wasmsched/wasmsched/sdk/go/klog"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "TeamPlacement"

// CycleState keys.
const (
	preFilterStateKey = "PreFilter" + Name
	preScoreStateKey  = "PreScore" + Name
	reservationKey    = "Reserve" + Name
)

// Filter reasons, worded to be counted ("0/6 nodes are available: 3 node(s) dedicated to another team").
const (
	ErrReasonOtherTeam = "node(s) dedicated to another team"
	ErrReasonShared    = "node(s) shared, but the pod requires a node dedicated to its team"
)

// TeamPlacement keeps teams on their dedicated nodes and other pods off them.
type TeamPlacement struct {
	args   Args
	frozen map[string]bool
	// listNodes returns the snapshot's nodes; handle.NodeInfos().List in the guest.
	listNodes func() []api.NodeInfo
}

// New builds the plugin from its guestConfig (see Args).
func New(config []byte) (*TeamPlacement, error) {
	args, err := DecodeArgs(config)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid guestConfig: %w", Name, err)
	}
	frozen := map[string]bool{}
	for _, t := range args.FrozenTeams {
		frozen[t] = true
	}
	return &TeamPlacement{args: args, frozen: frozen, listNodes: handle.NodeInfos().List}, nil
}

// preFilterState is computed once per pod, in PreFilter, and read by every later extension point.
type preFilterState struct {
	pod           string // namespace/name, for logs
	team          string // "" when the pod has no team label
	dedicatedOnly bool
	frozen        bool
	// nodeTeams maps every node of the snapshot to the team it is dedicated to ("" = shared).
	nodeTeams map[string]string
	// teamNodes are the nodes dedicated to team, in snapshot order.
	teamNodes []string
}

// preScoreState holds the feasible nodes of the pod's team.
type preScoreState struct {
	teamNodes map[string]bool
}

// reservation is written by Reserve and removed by Unreserve.
type reservation struct {
	node      string
	dedicated bool // the node is dedicated to the pod's team
}

func getPreFilterState(state api.CycleState) (*preFilterState, error) {
	v, ok := state.Read(preFilterStateKey)
	if !ok {
		return nil, fmt.Errorf("reading %q from cycleState: not found", preFilterStateKey)
	}
	return v.(*preFilterState), nil
}

// PreFilter computes the pod's state: its team and the team of every node.
func (pl *TeamPlacement) PreFilter(state api.CycleState, podInfo api.PodInfo) ([]string, *api.Status) {
	pod := podInfo.Pod()
	if pod == nil {
		return nil, api.NewStatus(api.Error, "no pod")
	}
	st := &preFilterState{
		pod:       podKey(podInfo),
		team:      pod.Labels[pl.args.PodLabelKey],
		nodeTeams: map[string]string{},
	}
	st.frozen = pl.frozen[st.team]
	if a := pl.args.DedicatedOnlyAnnotation; a != "" {
		st.dedicatedOnly = pod.Annotations[a] == "true"
	}
	for _, ni := range pl.listNodes() {
		team := nodeTeam(ni.Node(), pl.args.NodeLabelKey)
		st.nodeTeams[ni.Name()] = team
		if team != "" && team == st.team {
			st.teamNodes = append(st.teamNodes, ni.Name())
		}
	}
	state.Write(preFilterStateKey, st)
	klog.InfoS("TeamPlacement: prefilter", "pod", st.pod, "team", st.team, "teamNodes",
		strings.Join(st.teamNodes, ","), "dedicatedOnly", st.dedicatedOnly)

	switch {
	case st.team == "" && pl.args.DenyUnlabeled:
		return nil, api.NewStatus(api.UnschedulableAndUnresolvable,
			fmt.Sprintf("pod has no %q label", pl.args.PodLabelKey))
	case !st.dedicatedOnly:
		return nil, nil
	case st.team == "":
		return nil, api.NewStatus(api.UnschedulableAndUnresolvable,
			fmt.Sprintf("pod has annotation %s=true but no %q label", pl.args.DedicatedOnlyAnnotation,
				pl.args.PodLabelKey))
	case len(st.teamNodes) == 0:
		return nil, api.NewStatus(api.UnschedulableAndUnresolvable,
			fmt.Sprintf("no node is dedicated to team %q", st.team))
	}
	// Only the team's nodes are evaluated.
	return st.teamNodes, nil
}

// nodeTeam is the team a node is dedicated to, "" for a shared node.
func nodeTeam(node *corev1.Node, key string) string {
	if node == nil {
		return ""
	}
	return node.Labels[key]
}

// Filter rejects nodes of other teams, and shared nodes for dedicated-only pods.
func (pl *TeamPlacement) Filter(state api.CycleState, _ api.PodInfo, nodeInfo api.NodeInfo) *api.Status {
	st, err := getPreFilterState(state)
	if err != nil {
		return api.AsStatus(err)
	}
	team, ok := st.nodeTeams[nodeInfo.Name()]
	if !ok { // not in PreFilter's snapshot: ask the host
		node := nodeInfo.Node()
		if node == nil {
			return api.NewStatus(api.UnschedulableAndUnresolvable, "node not found")
		}
		team = nodeTeam(node, pl.args.NodeLabelKey)
	}
	switch {
	case team != "" && team != st.team:
		return api.NewStatus(api.UnschedulableAndUnresolvable, ErrReasonOtherTeam)
	case team == "" && st.dedicatedOnly:
		return api.NewStatus(api.UnschedulableAndUnresolvable, ErrReasonShared)
	}
	return nil
}

// PreScore keeps the feasible nodes of the pod's team. Without a team, or without any of its nodes
// among the feasible ones, every node would score the same: scoring is skipped.
func (pl *TeamPlacement) PreScore(state api.CycleState, _ api.PodInfo, nodes []api.NodeInfo) *api.Status {
	st, err := getPreFilterState(state)
	if err != nil {
		return api.AsStatus(err)
	}
	if st.team == "" {
		return api.NewStatus(api.Skip)
	}
	ps := &preScoreState{teamNodes: map[string]bool{}}
	for _, ni := range nodes {
		if st.nodeTeams[ni.Name()] == st.team {
			ps.teamNodes[ni.Name()] = true
		}
	}
	if len(ps.teamNodes) == 0 {
		return api.NewStatus(api.Skip)
	}
	state.Write(preScoreStateKey, ps)
	return nil
}

// Score gives preferredScore to the team's nodes and sharedScore to the others (shared nodes: nodes
// of other teams did not pass Filter).
func (pl *TeamPlacement) Score(state api.CycleState, _ api.PodInfo, nodeInfo api.NodeInfo) (int64, *api.Status) {
	v, ok := state.Read(preScoreStateKey)
	if !ok {
		return 0, api.NewStatus(api.Error, fmt.Sprintf("reading %q from cycleState: not found", preScoreStateKey))
	}
	if v.(*preScoreState).teamNodes[nodeInfo.Name()] {
		return pl.args.PreferredScore, nil
	}
	return pl.args.SharedScore, nil
}

// Reserve records the reserved node in CycleState.
func (pl *TeamPlacement) Reserve(state api.CycleState, _ api.PodInfo, nodeName string) *api.Status {
	st, err := getPreFilterState(state)
	if err != nil {
		return api.AsStatus(err)
	}
	r := &reservation{node: nodeName, dedicated: st.team != "" && st.nodeTeams[nodeName] == st.team}
	state.Write(reservationKey, r)
	klog.InfoS("TeamPlacement: reserve", "pod", st.pod, "node", nodeName, "dedicated", r.dedicated)
	return nil
}

// Unreserve removes the reservation Reserve recorded.
func (pl *TeamPlacement) Unreserve(state api.CycleState, podInfo api.PodInfo, nodeName string) {
	_, had := state.Read(reservationKey)
	state.Delete(reservationKey)
	klog.InfoS("TeamPlacement: unreserve", "pod", podKey(podInfo), "node", nodeName, "hadReservation", had)
}

// Permit lets the pod bind unless its team is frozen. It also checks that Reserve ran for this node.
func (pl *TeamPlacement) Permit(state api.CycleState, _ api.PodInfo, nodeName string) (*api.Status, time.Duration) {
	st, err := getPreFilterState(state)
	if err != nil {
		return api.AsStatus(err), 0
	}
	v, ok := state.Read(reservationKey)
	if !ok || v.(*reservation).node != nodeName {
		return api.AsStatus(fmt.Errorf("no reservation for node %q in cycleState", nodeName)), 0
	}
	if st.frozen {
		klog.InfoS("TeamPlacement: permit", "pod", st.pod, "node", nodeName, "decision", "deny")
		return api.NewStatus(api.Unschedulable, fmt.Sprintf("node(s) not permitted: team %q is frozen", st.team)), 0
	}
	klog.InfoS("TeamPlacement: permit", "pod", st.pod, "node", nodeName, "decision", "allow")
	return nil, 0
}

// PostBind logs the placement and records an event about it with data PreFilter computed.
func (pl *TeamPlacement) PostBind(state api.CycleState, podInfo api.PodInfo, nodeName string) {
	st, err := getPreFilterState(state)
	if err != nil {
		klog.ErrorS(err, "TeamPlacement: postbind")
		return
	}
	v, ok := state.Read(reservationKey)
	if !ok {
		klog.ErrorS(errors.New("no reservation in cycleState"), "TeamPlacement: postbind", "pod", st.pod)
		return
	}
	r := v.(*reservation)
	kind := "shared"
	if r.dedicated {
		kind = "dedicated"
	}
	var note string
	if st.team == "" {
		note = fmt.Sprintf("no team: bound to %s node %s", kind, nodeName)
	} else {
		teamNodes := strings.Join(st.teamNodes, ",")
		if teamNodes == "" {
			teamNodes = "none"
		}
		note = fmt.Sprintf("team %s: bound to %s node %s; team nodes seen in PreFilter: %s", st.team, kind,
			nodeName, teamNodes)
	}
	klog.InfoS("TeamPlacement: postbind", "pod", st.pod, "node", nodeName, "team", st.team, "placement", kind)
	handle.GetEventRecorder().Eventf(podInfo.Pod(), &corev1.ObjectReference{Kind: "Node", APIVersion: "v1",
		Name: nodeName}, corev1.EventTypeNormal, "TeamPlaced", "Binding", "%s", note)
}

func podKey(podInfo api.PodInfo) string {
	if pod := podInfo.Pod(); pod != nil {
		return pod.Namespace + "/" + pod.Name
	}
	return ""
}
