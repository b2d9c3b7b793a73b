// Command allpoints is a test guest implementing every extension point of the Go SDK. Its behaviour
// is driven by the pod's labels and annotations and by its guestConfig, so that
// tests/wasm/test_go_sdk_guest.py can check every result through the real host:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -o allpoints.wasm .
//
// Pod annotations it reads (all optional):
//
//	<point>-status      "<code>:<reason>", the status of that point (prefilter, addpod, removepod,
//	                    filter, postfilter, prescore, score, normalizescore, reserve, permit,
//	                    prebind, bind)
//	nodes               PreFilter's node names, comma-separated
//	nodes-with-label    "key=value": PreFilter returns the snapshot's nodes with that label
//	reject              Filter rejects these nodes (Unschedulable) unless RemovePod made room there
//	score               Score's value instead of the computed one (int64, clamped by the SDK)
//	negative            "true": Score negates its score
//	normalize-keep      NormalizeScore leaves these nodes' scores alone
//	permit-timeout      Permit's timeout (a Go duration)
//	reject-waiting      Permit rejects the waiting pod with this UID and records an event about it
//
// and pod labels: zone (Filter wants the node's guestConfig zoneLabel equal to it), deny (Permit
// rejects the pod).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/bind"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/enqueue"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/filter"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/normalizescore"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/permit"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/postbind"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/postfilter"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/prebind"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/prefilterextensions"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/prescore"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/reserve"
	_ "github.com/wasmsched/wasmsched/sdk/go/exports/score"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
	"github.com/wasmsched/wasmsched/sdk/go/klog"
	"github.com/wasmsched/wasmsched/sdk/go/plugin"
)

func init() { plugin.Set(New) }

// main is required by the Go toolchain but never runs in a -buildmode=c-shared module.
func main() {}

var (
	_ api.EnqueueExtensions   = (*AllPoints)(nil)
	_ api.PreFilterPlugin     = (*AllPoints)(nil)
	_ api.PreFilterExtensions = (*AllPoints)(nil)
	_ api.FilterPlugin        = (*AllPoints)(nil)
	_ api.PostFilterPlugin    = (*AllPoints)(nil)
	_ api.PreScorePlugin      = (*AllPoints)(nil)
	_ api.ScorePlugin         = (*AllPoints)(nil)
	_ api.ScoreExtensions     = (*AllPoints)(nil)
	_ api.ReservePlugin       = (*AllPoints)(nil)
	_ api.PermitPlugin        = (*AllPoints)(nil)
	_ api.PreBindPlugin       = (*AllPoints)(nil)
	_ api.BindPlugin          = (*AllPoints)(nil)
	_ api.PostBindPlugin      = (*AllPoints)(nil)
)

// config is the guestConfig, a JSON object.
type config struct {
	Tag       string `json:"tag"`
	ZoneLabel string `json:"zoneLabel"`
	ScoreBase int64  `json:"scoreBase"`
}

// AllPoints implements every extension point.
type AllPoints struct{ cfg config }

// New decodes the guestConfig; an invalid one fails the guest's instantiation.
func New(raw []byte) (*AllPoints, error) {
	cfg := config{Tag: "none", ZoneLabel: "zone"}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, fmt.Errorf("allpoints: decoding guestConfig %q: %w", raw, err)
		}
	}
	klog.InfoS("allpoints configured", "tag", cfg.Tag, "zoneLabel", cfg.ZoneLabel, "scoreBase", cfg.ScoreBase)
	return &AllPoints{cfg: cfg}, nil
}

// CycleState keys.
const (
	keyUID       = "uid"       // string: the UID of the pod whose cycle this is
	keyPreFilter = "prefilter" // string: "<namespace>/<name>@<tag>", carried to later points
	keyChanges   = "changes"   // *[]string: "-pod@node" / "+pod@node" from RemovePod / AddPod
	keyPreScore  = "prescore"  // []string: the nodes PreScore got
	keyReserved  = "reserved"  // string: the node Reserve got
)

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

func readString(state api.CycleState, key string) string {
	v, _ := state.Read(key)
	s, _ := v.(string)
	return s
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// statusFrom reads the annotation "<point>-status" = "<code>:<reason>".
func statusFrom(pod *corev1.Pod, point string) (*api.Status, bool) {
	v, ok := pod.Annotations[point+"-status"]
	if !ok {
		return nil, false
	}
	codeText, reason, _ := strings.Cut(v, ":")
	code, err := strconv.ParseInt(codeText, 10, 32)
	if err != nil {
		return api.NewStatus(api.Error, fmt.Sprintf("bad %s-status annotation %q", point, v)), true
	}
	if reason == "" {
		return api.NewStatus(api.Code(code)), true
	}
	return api.NewStatus(api.Code(code), reason), true
}

// checkState fails when the CycleState is not the pod's own, i.e. PreFilter did not run for it on
// this instance.
func checkState(state api.CycleState, pod *corev1.Pod) *api.Status {
	uid, ok := state.Read(keyUID)
	if !ok {
		return api.NewStatus(api.Error, "no cycle state: PreFilter did not run")
	}
	if uid != string(pod.UID) {
		return api.NewStatus(api.Error, fmt.Sprintf("cycle state of pod %v, not of %s", uid, pod.UID))
	}
	return nil
}

// EventsToRegister returns the events the test expects mapped by the host.
func (pl *AllPoints) EventsToRegister() []api.ClusterEvent {
	return []api.ClusterEvent{
		{Resource: api.Node, ActionType: api.Add},
		{Resource: api.Pod, ActionType: api.All},
		{Resource: api.Node, ActionType: api.UpdateNodeLabel},
		{Resource: api.ResourceClaim, ActionType: api.Update},
	}
}

// PreFilter starts the pod's state and narrows the nodes if asked to.
func (pl *AllPoints) PreFilter(state api.CycleState, podInfo api.PodInfo) ([]string, *api.Status) {
	pod := podInfo.Pod()
	state.Write(keyUID, string(pod.UID))
	state.Write(keyPreFilter, podKey(pod)+"@"+pl.cfg.Tag)
	state.Write(keyChanges, &[]string{})
	klog.InfoS("prefilter", "pod", podKey(pod), "tag", pl.cfg.Tag)
	names := splitList(pod.Annotations["nodes"])
	if sel := pod.Annotations["nodes-with-label"]; sel != "" {
		k, v, _ := strings.Cut(sel, "=")
		for _, ni := range handle.NodeInfos().List() {
			if l, ok := ni.Node().Labels[k]; ok && l == v {
				names = append(names, ni.Name())
			}
		}
		if len(names) == 0 {
			return nil, api.NewStatus(api.UnschedulableAndUnresolvable, "no node has label "+sel)
		}
	}
	if s, ok := statusFrom(pod, "prefilter"); ok {
		return names, s
	}
	return names, nil
}

func changesOf(state api.CycleState) *[]string {
	v, _ := state.Read(keyChanges)
	return v.(*[]string)
}

// RemovePod records that podToRemove left nodeInfo's node during preemption.
func (pl *AllPoints) RemovePod(state api.CycleState, podToSchedule, podToRemove api.PodInfo,
	nodeInfo api.NodeInfo) *api.Status {
	return pl.podChange(state, podToSchedule, podToRemove, nodeInfo, "removepod", "-")
}

// AddPod undoes a RemovePod of the same pod on the node, else records the addition.
func (pl *AllPoints) AddPod(state api.CycleState, podToSchedule, podToAdd api.PodInfo,
	nodeInfo api.NodeInfo) *api.Status {
	return pl.podChange(state, podToSchedule, podToAdd, nodeInfo, "addpod", "+")
}

func (pl *AllPoints) podChange(state api.CycleState, podToSchedule, target api.PodInfo, nodeInfo api.NodeInfo,
	point, sign string) *api.Status {
	cur, tp := podToSchedule.Pod(), target.Pod()
	if s := checkState(state, cur); s != nil {
		return s
	}
	if s, ok := statusFrom(cur, point); ok {
		return s
	}
	if tp == nil {
		return api.NewStatus(api.Error, point+": no target pod")
	}
	if tp.UID == cur.UID {
		return api.NewStatus(api.Error, point+": the target is the pod being scheduled")
	}
	changes := changesOf(state)
	undo := "-" + tp.Name + "@" + nodeInfo.Name()
	if i := slices.Index(*changes, undo); sign == "+" && i >= 0 {
		*changes = slices.Delete(*changes, i, i+1)
	} else {
		*changes = append(*changes, sign+tp.Name+"@"+nodeInfo.Name())
	}
	klog.InfoS(point, "pod", podKey(cur), "target", podKey(tp), "node", nodeInfo.Name())
	return nil
}

// Filter checks the node's zone label and the "reject" annotation.
func (pl *AllPoints) Filter(state api.CycleState, podInfo api.PodInfo, nodeInfo api.NodeInfo) *api.Status {
	pod := podInfo.Pod()
	if s := checkState(state, pod); s != nil {
		return s
	}
	if s, ok := statusFrom(pod, "filter"); ok {
		return s
	}
	node := nodeInfo.Node()
	if node == nil {
		return api.NewStatus(api.UnschedulableAndUnresolvable, fmt.Sprintf("node %q is not in the snapshot",
			nodeInfo.Name()))
	}
	if want, ok := pod.Labels["zone"]; ok {
		if got := node.Labels[pl.cfg.ZoneLabel]; got != want {
			return api.NewStatus(api.UnschedulableAndUnresolvable,
				fmt.Sprintf("node %s has %s=%q, pod wants %q", node.Name, pl.cfg.ZoneLabel, got, want))
		}
	}
	if slices.Contains(splitList(pod.Annotations["reject"]), node.Name) {
		var here []string
		for _, c := range *changesOf(state) {
			if strings.HasSuffix(c, "@"+node.Name) {
				if strings.HasPrefix(c, "-") {
					return nil // preemption made room
				}
				here = append(here, c)
			}
		}
		return api.NewStatus(api.Unschedulable, "node "+node.Name+" rejected for "+pod.Name,
			"changes ["+strings.Join(here, " ")+"]")
	}
	return nil
}

// PostFilter nominates the first node (by name) that is Unschedulable.
func (pl *AllPoints) PostFilter(state api.CycleState, podInfo api.PodInfo,
	m api.NodeToStatus) (string, api.NominatingMode, *api.Status) {
	pod := podInfo.Pod()
	if s := checkState(state, pod); s != nil {
		return "", api.ModeNoop, s
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	nominee := ""
	for _, n := range names {
		if m[n] == api.Unschedulable {
			nominee = n
			break
		}
	}
	if s, ok := statusFrom(pod, "postfilter"); ok {
		return nominee, api.ModeOverride, s
	}
	if nominee != "" {
		return nominee, api.ModeOverride, nil
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + m[n].String()
	}
	return "", api.ModeNoop, api.NewStatus(api.UnschedulableAndUnresolvable, "no preemption candidate",
		"statuses ["+strings.Join(parts, " ")+"]", "absent="+m.Get("absent").String())
}

// PreScore remembers the nodes it got.
func (pl *AllPoints) PreScore(state api.CycleState, podInfo api.PodInfo, nodes []api.NodeInfo) *api.Status {
	pod := podInfo.Pod()
	if s := checkState(state, pod); s != nil {
		return s
	}
	names := make([]string, len(nodes))
	for i, ni := range nodes {
		names[i] = ni.Name()
	}
	state.Write(keyPreScore, names)
	klog.InfoS("prescore", "pod", podKey(pod), "nodes", strings.Join(names, ","))
	if s, ok := statusFrom(pod, "prescore"); ok {
		return s
	}
	return nil
}

// Score is scoreBase + 10 × the node name's last digit + the pod's images on the node (size in MB
// plus the number of nodes having the image).
func (pl *AllPoints) Score(state api.CycleState, podInfo api.PodInfo, nodeInfo api.NodeInfo) (int64, *api.Status) {
	pod := podInfo.Pod()
	if s := checkState(state, pod); s != nil {
		return 0, s
	}
	v, ok := state.Read(keyPreScore)
	if !ok {
		return 0, api.NewStatus(api.Error, "score before prescore")
	}
	if !slices.Contains(v.([]string), nodeInfo.Name()) {
		return 0, api.NewStatus(api.Error, fmt.Sprintf("node %s was not pre-scored (prescore got %v)",
			nodeInfo.Name(), v))
	}
	if s, ok := statusFrom(pod, "score"); ok {
		return 7, s
	}
	var score int64
	if text, ok := pod.Annotations["score"]; ok {
		var err error
		if score, err = strconv.ParseInt(text, 10, 64); err != nil {
			return 0, api.AsStatus(err)
		}
	} else {
		score = pl.cfg.ScoreBase
		if name := nodeInfo.Name(); name != "" && name[len(name)-1] >= '0' && name[len(name)-1] <= '9' {
			score += 10 * int64(name[len(name)-1]-'0')
		}
		images := nodeInfo.ImageStates()
		for _, c := range pod.Spec.Containers {
			if st, ok := images[c.Image]; ok {
				score += st.Size/1_000_000 + int64(st.NumNodes)
			}
		}
	}
	if pod.Annotations["negative"] == "true" {
		score = -score
	}
	return score, nil
}

// NormalizeScore reverses the scores (100 - s), except for the nodes in "normalize-keep".
func (pl *AllPoints) NormalizeScore(state api.CycleState, podInfo api.PodInfo, scores []api.NodeScore) *api.Status {
	pod := podInfo.Pod()
	if s := checkState(state, pod); s != nil {
		return s
	}
	if s, ok := statusFrom(pod, "normalizescore"); ok {
		return s
	}
	keep := splitList(pod.Annotations["normalize-keep"])
	for i := range scores {
		if !slices.Contains(keep, scores[i].Name) {
			scores[i].Score = 100 - scores[i].Score
		}
	}
	return nil
}

// Reserve remembers the node.
func (pl *AllPoints) Reserve(state api.CycleState, podInfo api.PodInfo, nodeName string) *api.Status {
	pod := podInfo.Pod()
	if s := checkState(state, pod); s != nil {
		return s
	}
	if s, ok := statusFrom(pod, "reserve"); ok {
		return s
	}
	state.Write(keyReserved, nodeName)
	klog.InfoS("reserved", "pod", podKey(pod), "node", nodeName, "prefilter", readString(state, keyPreFilter))
	return nil
}

// Unreserve logs, at error (ErrorS) and at info (Info), what Reserve recorded.
func (pl *AllPoints) Unreserve(state api.CycleState, podInfo api.PodInfo, nodeName string) {
	pod := podInfo.Pod()
	klog.ErrorS(errors.New("unreserved"), "unreserve", "pod", podKey(pod), "node", nodeName,
		"reserved", readString(state, keyReserved), "prefilter", readString(state, keyPreFilter))
	klog.Info("unreserve done for ", pod.Name)
}

// Permit rejects a waiting pod if asked to, denies pods labelled deny, else returns the status and
// timeout of the annotations.
func (pl *AllPoints) Permit(state api.CycleState, podInfo api.PodInfo, nodeName string) (*api.Status, time.Duration) {
	pod := podInfo.Pod()
	if s := checkState(state, pod); s != nil {
		return s, 0
	}
	if uid := pod.Annotations["reject-waiting"]; uid != "" {
		wp := handle.GetWaitingPod(uid)
		if wp == nil {
			return api.NewStatus(api.Unschedulable,
				fmt.Sprintf("no waiting pod %s (rejected=%t)", uid, handle.RejectWaitingPod(uid))), 0
		}
		w := wp.GetPod()
		rejected := handle.RejectWaitingPod(uid)
		handle.GetEventRecorder().Eventf(w, pod, "Warning", "Rejected", "Permit",
			"%s rejected waiting pod %s (uid %s, %d bytes of annotations): %t", pod.Name, podKey(w), w.UID,
			len(w.Annotations["big"]), rejected)
	}
	if v, ok := pod.Labels["deny"]; ok {
		return api.NewStatus(api.Unschedulable, fmt.Sprintf("denied on %s by label deny=%s", nodeName, v)), 0
	}
	var timeout time.Duration
	if text := pod.Annotations["permit-timeout"]; text != "" {
		var err error
		if timeout, err = time.ParseDuration(text); err != nil {
			return api.AsStatus(err), 0
		}
	}
	s, _ := statusFrom(pod, "permit")
	return s, timeout
}

// PreBind checks that it runs on the node Reserve got, with Reserve's state.
func (pl *AllPoints) PreBind(state api.CycleState, podInfo api.PodInfo, nodeName string) *api.Status {
	pod := podInfo.Pod()
	if s := checkState(state, pod); s != nil {
		return s
	}
	if r := readString(state, keyReserved); r != nodeName {
		return api.NewStatus(api.Error, fmt.Sprintf("prebind on %s, but reserved %q", nodeName, r))
	}
	if s, ok := statusFrom(pod, "prebind"); ok {
		return s
	}
	return nil
}

// Bind skips (the default binder binds) unless the annotation says otherwise.
func (pl *AllPoints) Bind(state api.CycleState, podInfo api.PodInfo, nodeName string) *api.Status {
	pod := podInfo.Pod()
	if s := checkState(state, pod); s != nil {
		return s
	}
	if s, ok := statusFrom(pod, "bind"); ok {
		return s
	}
	return api.NewStatus(api.Skip)
}

// PostBind records an event about the pod and its node carrying the state of the whole cycle.
func (pl *AllPoints) PostBind(state api.CycleState, podInfo api.PodInfo, nodeName string) {
	pod := podInfo.Pod()
	var related any // stays an untyped nil when the node is unknown
	note := "bound to %s (prefilter %s, reserved %s, tag %s)"
	args := []any{nodeName, readString(state, keyPreFilter), readString(state, keyReserved), pl.cfg.Tag}
	if ni, err := handle.NodeInfos().Get(nodeName); err != nil {
		note += ": %v"
		args = append(args, err)
	} else {
		related = ni.Node()
	}
	handle.GetEventRecorder().Eventf(pod, related, "Normal", "Bound", "PostBind", note, args...)
}
