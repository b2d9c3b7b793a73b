//go:build !wasip1

package imports

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Fake is the host seen by natively compiled tests. Values are whole encodings; the functions
// below apply the buf/buf_limit protocol to them as the host does. Set it with hosttest.Install.
var Fake *Host

// Host holds what a real host would answer for one call, and records what the guest sent.
type Host struct {
	Config, CurrentPod, TargetPod                    []byte
	CurrentNodeName                                  string
	FilteredNodeList, NodeToStatusMap, NodeScoreList []byte
	Nodes                                            map[string][]byte // protobuf Node per name
	NodeList                                         []byte
	ImageStates                                      map[string][]byte // JSON per node name
	WaitingPods                                      map[string][]byte // protobuf Pod per UID
	LogSeverity                                      int32
	Logged                                           []LogRecord
	Events                                           [][]byte
	Rejected                                         []string
	ClusterEvents, NodeNames, NormalizedScoreList    []byte
	NominatedNodeName, StatusReason                  string
	Calls                                            map[string]int

	// ABI v2 (docs/abi.md §14).

	// SnapshotChanges are the values handle.snapshot.changes returns, one per call that fits
	// (the cursor); 0 once they are used up. Each starts with its `more` byte.
	SnapshotChanges [][]byte
	// Overlay is handle.node_info.overlay's value for the call.
	Overlay []byte
	// Objects holds the watched kinds' objects as JSON, by "group/version/resource"; a kind that
	// is not a key is not declared in args.watch.
	Objects map[string][][]byte
	// ClusterEventsWithHints is what the guest sent with result.cluster_events_with_hints.
	ClusterEventsWithHints []byte
	// QueueingHintEvent, OldObject, NewObject are queueing_hint.event (u32 LE), .old_object, .new_object.
	QueueingHintEvent, OldObject, NewObject []byte
	// CycleStateID is cycle_state.id; Released are the ids cycle_state.released reports next.
	CycleStateID uint32
	Released     []uint32
	// NominatedPods are protobuf Pods per node name, highest priority first.
	NominatedPods map[string][][]byte
	// RunFilterWithNominatedPods answers handle.run_filter_plugins_with_nominated_pods.
	RunFilterWithNominatedPods func(nodeName string) (code int32, reason string)

	// ABI v2: the queue and gangs (docs/abi.md §15).

	// QueuedPodInfo is queued_pod_info's JSON for the call (hosttest.QueuedPodInfo encodes one).
	QueuedPodInfo []byte
	// SortKey is what the guest sent with result.sort_key; nil until it sends one.
	SortKey []byte
	// Waiting are the pods waiting at Permit, served by handle.waiting_pods in this order. allow
	// removes the plugin from an entry's Plugins, and the entry once none is pending (the pod
	// goes on to binding); reject removes the entry.
	Waiting []WaitingPod
	// WaitingCalls records every handle.waiting_pod.allow and .reject, in order.
	WaitingCalls []WaitingCall
	// PluginName is the calling plugin's name, the default of an allow or reject without one.
	PluginName string
	// Pods are the protobuf Pods handle.pods.list serves: filtered by the query, in
	// namespace/name order.
	Pods [][]byte
	// Activated accumulates the pod keys the guest sent with handle.activate.
	Activated []string
	// Now is handle.clock; the zero Time serves 0 (the Unix epoch).
	Now time.Time
}

// WaitingPod is a pod waiting at Permit on the fake host.
type WaitingPod struct {
	Key     string // the pod's uid, or namespace/name
	Pod     []byte // protobuf
	Plugins []string
}

// WaitingCall is one handle.waiting_pod.allow or .reject call.
type WaitingCall struct {
	Op                   string // "allow" or "reject"
	UID, Plugin, Message string
	Found                bool
}

// LogRecord is one klog call.
type LogRecord struct {
	Severity int32
	Msg      string
	KVs      []byte // NUL list, nil for log
}

func host() *Host {
	if Fake == nil {
		panic("sdk: no host; natively compiled tests install one with hosttest.Install")
	}
	if Fake.Calls == nil {
		Fake.Calls = map[string]int{}
	}
	return Fake
}

func serve(name string, v []byte, buf []byte) uint32 {
	host().Calls[name]++
	if len(v) <= len(buf) {
		copy(buf, v)
	}
	return uint32(len(v))
}

func Node(name string, buf []byte) uint32 { return serve("node", host().Nodes[name], buf) }
func NodeList(buf []byte) uint32          { return serve("nodeList", host().NodeList, buf) }

// Without a fake host, klog writes to stderr, so that plugin packages log in their own unit tests
// without setting one up.
func Log(sev int32, msg string) {
	if Fake == nil {
		fmt.Fprintf(os.Stderr, "%c %s\n", "IWEF"[min(max(sev, 0), 3)], msg)
		return
	}
	Fake.Logged = append(Fake.Logged, LogRecord{Severity: sev, Msg: msg})
}
func Logs(sev int32, msg string, kvs []byte) {
	if Fake == nil {
		fmt.Fprintf(os.Stderr, "%c %q %s\n", "IWEF"[min(max(sev, 0), 3)], msg,
			strings.ReplaceAll(strings.TrimSuffix(string(kvs), "\x00"), "\x00", " "))
		return
	}
	Fake.Logged = append(Fake.Logged, LogRecord{Severity: sev, Msg: msg, KVs: append([]byte{}, kvs...)})
}
func Severity() int32 {
	if Fake == nil {
		return 0
	}
	return Fake.LogSeverity
}
func GetConfig(buf []byte) uint32  { return serve("get_config", host().Config, buf) }
func CurrentPod(buf []byte) uint32 { return serve("currentPod", host().CurrentPod, buf) }
func TargetPod(buf []byte) uint32  { return serve("targetPod", host().TargetPod, buf) }
func CurrentNodeName(buf []byte) uint32 {
	return serve("currentNodeName", []byte(host().CurrentNodeName), buf)
}
func FilteredNodeList(buf []byte) uint32 {
	return serve("filteredNodeList", host().FilteredNodeList, buf)
}
func NodeToStatusMap(buf []byte) uint32 { return serve("nodeToStatusMap", host().NodeToStatusMap, buf) }
func NodeScoreList(buf []byte) uint32   { return serve("nodeScoreList", host().NodeScoreList, buf) }
func NodeImageStates(name string, buf []byte) uint32 {
	v, ok := host().ImageStates[name]
	if !ok {
		v = []byte("null")
	}
	return serve("nodeImageStates", v, buf)
}
func ResultClusterEvents(b []byte)       { host().ClusterEvents = append([]byte{}, b...) }
func ResultNodeNames(b []byte)           { host().NodeNames = append([]byte{}, b...) }
func ResultNominatedNodeName(s string)   { host().NominatedNodeName = s }
func ResultStatusReason(s string)        { host().StatusReason = s }
func ResultNormalizedScoreList(b []byte) { host().NormalizedScoreList = append([]byte{}, b...) }
func Eventf(b []byte)                    { h := host(); h.Events = append(h.Events, append([]byte{}, b...)) }

func RejectWaitingPod(uid string, out []byte) {
	h := host()
	var v uint64
	if _, ok := h.WaitingPods[uid]; ok {
		v = 1
		h.Rejected = append(h.Rejected, uid)
	}
	if len(out) >= 8 {
		binary.LittleEndian.PutUint64(out, v)
	}
}

// GetWaitingPod writes as docs/abi.md §4.4 says: zeros for none, the pod and a 0x00 terminator, or the
// too-small marker FF FF FF FF + u32 length.
func GetWaitingPod(uid string, out []byte) {
	v, ok := host().WaitingPods[uid]
	switch {
	case !ok:
		if len(out) >= 8 {
			clear(out[:8])
		}
	case len(v) <= len(out):
		copy(out, v)
		if len(v) < len(out) {
			out[len(v)] = 0
		}
	case len(out) >= 8:
		binary.LittleEndian.PutUint32(out, 0xFFFFFFFF)
		binary.LittleEndian.PutUint32(out[4:], uint32(len(v)))
	}
}

// ABI v2 (docs/abi.md §14).

// SnapshotChanges is a cursor: a call that fits consumes the value.
func SnapshotChanges(buf []byte) uint32 {
	h := host()
	var v []byte
	if len(h.SnapshotChanges) > 0 {
		v = h.SnapshotChanges[0]
	}
	n := serve("handle.snapshot.changes", v, buf)
	if len(v) > 0 && len(v) <= len(buf) {
		h.SnapshotChanges = h.SnapshotChanges[1:]
	}
	return n
}

func NodeInfoOverlay(buf []byte) uint32 {
	return serve("handle.node_info.overlay", host().Overlay, buf)
}

type objectQuery struct {
	Group, Version, Resource, Namespace, Name, LabelSelector string
}

type objectMeta struct {
	Metadata struct {
		Namespace, Name string
		Labels          map[string]string
	}
}

func (h *Host) objects(call string, query []byte) ([][]byte, objectQuery) {
	var q objectQuery
	if err := json.Unmarshal(query, &q); err != nil {
		panic(fmt.Sprintf("host function k8s.io/scheduler.%s failed: invalid query: %v", call, err))
	}
	objs, ok := h.Objects[q.Group+"/"+q.Version+"/"+q.Resource]
	if !ok {
		panic(fmt.Sprintf("host function k8s.io/scheduler.%s failed: resource %s is not in args.watch", call, q.Resource))
	}
	return objs, q
}

func ObjectsList(query, buf []byte) uint32 {
	h := host()
	objs, q := h.objects("handle.objects.list", query)
	sel, err := labels.Parse(q.LabelSelector)
	if err != nil {
		panic(fmt.Sprintf("host function k8s.io/scheduler.handle.objects.list failed: %v", err))
	}
	var ms []listed
	for _, o := range objs {
		var m objectMeta
		if err := json.Unmarshal(o, &m); err != nil {
			panic(err)
		}
		if (q.Namespace == "" || m.Metadata.Namespace == q.Namespace) && sel.Matches(labels.Set(m.Metadata.Labels)) {
			ms = append(ms, listed{m.Metadata.Namespace, m.Metadata.Name, o})
		}
	}
	return serve("handle.objects.list", framedInKeyOrder(ms), buf)
}

func ObjectsGet(query, buf []byte) uint32 {
	h := host()
	objs, q := h.objects("handle.objects.get", query)
	for _, o := range objs {
		var m objectMeta
		if err := json.Unmarshal(o, &m); err != nil {
			panic(err)
		}
		if m.Metadata.Namespace == q.Namespace && m.Metadata.Name == q.Name {
			return serve("handle.objects.get", o, buf)
		}
	}
	return serve("handle.objects.get", nil, buf)
}

func ResultClusterEventsWithHints(b []byte) { host().ClusterEventsWithHints = append([]byte{}, b...) }
func QueueingHintEvent(buf []byte) uint32 {
	return serve("queueing_hint.event", host().QueueingHintEvent, buf)
}
func QueueingHintOldObject(buf []byte) uint32 {
	return serve("queueing_hint.old_object", host().OldObject, buf)
}
func QueueingHintNewObject(buf []byte) uint32 {
	return serve("queueing_hint.new_object", host().NewObject, buf)
}

func CycleStateID(buf []byte) uint32 {
	return serve("cycle_state.id", binary.LittleEndian.AppendUint32(nil, host().CycleStateID), buf)
}

// CycleStateReleased lists the released ids once: a call that fits empties the list.
func CycleStateReleased(buf []byte) uint32 {
	h := host()
	var v []byte
	for _, id := range h.Released {
		v = binary.LittleEndian.AppendUint32(v, id)
	}
	n := serve("cycle_state.released", v, buf)
	if len(v) <= len(buf) {
		h.Released = nil
	}
	return n
}

func NominatedPodsForNode(name string, buf []byte) uint32 {
	var v []byte
	for _, p := range host().NominatedPods[name] {
		v = binary.LittleEndian.AppendUint32(v, uint32(len(p)))
		v = append(v, p...)
	}
	return serve("handle.nominated_pods_for_node", v, buf)
}

// RunFilterPluginsWithNominatedPods calls the test's function on every import call (the function
// may call the guest's Filter, as a real host does re-entrantly).
func RunFilterPluginsWithNominatedPods(name string, buf []byte) uint32 {
	h := host()
	if h.RunFilterWithNominatedPods == nil {
		panic("host function k8s.io/scheduler.handle.run_filter_plugins_with_nominated_pods failed: " +
			"the fake host has no RunFilterWithNominatedPods")
	}
	code, reason := h.RunFilterWithNominatedPods(name)
	v := binary.LittleEndian.AppendUint32(nil, uint32(code))
	v = binary.LittleEndian.AppendUint32(v, uint32(len(reason)))
	v = append(v, reason...)
	return serve("handle.run_filter_plugins_with_nominated_pods", v, buf)
}

// ABI v2: the queue and gangs (docs/abi.md §15).

func QueuedPodInfo(buf []byte) uint32 { return serve("queued_pod_info", host().QueuedPodInfo, buf) }
func ResultSortKey(b []byte)          { host().SortKey = append([]byte{}, b...) }

func WaitingPods(buf []byte) uint32 {
	var v []byte
	for _, w := range host().Waiting {
		plugins, err := json.Marshal(w.Plugins)
		if err != nil {
			panic(err)
		}
		if w.Plugins == nil {
			plugins = []byte("[]")
		}
		v = binary.LittleEndian.AppendUint32(v, uint32(len(w.Pod)))
		v = append(v, w.Pod...)
		v = binary.LittleEndian.AppendUint32(v, uint32(len(plugins)))
		v = append(v, plugins...)
	}
	return serve("handle.waiting_pods", v, buf)
}

type waitingQuery struct {
	UID     string `json:"uid"`
	Plugin  string `json:"plugin"`
	Message string `json:"message"`
}

func (h *Host) waitingCall(op string, query []byte) (WaitingCall, int) {
	h.Calls["handle.waiting_pod."+op]++
	var q waitingQuery
	if err := json.Unmarshal(query, &q); err != nil {
		panic(fmt.Sprintf("host function k8s.io/scheduler.handle.waiting_pod.%s failed: invalid query: %v", op, err))
	}
	if q.Plugin == "" {
		q.Plugin = h.PluginName
	}
	c := WaitingCall{Op: op, UID: q.UID, Plugin: q.Plugin, Message: q.Message}
	i := slices.IndexFunc(h.Waiting, func(w WaitingPod) bool { return w.Key == q.UID })
	c.Found = i >= 0
	return c, i
}

func WaitingPodAllow(query []byte) int32 {
	h := host()
	c, i := h.waitingCall("allow", query)
	h.WaitingCalls = append(h.WaitingCalls, c)
	if i < 0 {
		return 0
	}
	w := &h.Waiting[i]
	w.Plugins = slices.DeleteFunc(slices.Clone(w.Plugins), func(p string) bool { return p == c.Plugin })
	if len(w.Plugins) == 0 {
		h.Waiting = slices.Delete(h.Waiting, i, i+1)
	}
	return 1
}

func WaitingPodReject(query []byte) int32 {
	h := host()
	c, i := h.waitingCall("reject", query)
	h.WaitingCalls = append(h.WaitingCalls, c)
	if i < 0 {
		return 0
	}
	h.Waiting = slices.Delete(h.Waiting, i, i+1)
	return 1
}

func PodsList(query, buf []byte) uint32 {
	h := host()
	var q struct{ Namespace, LabelSelector string }
	if len(query) > 0 {
		if err := json.Unmarshal(query, &q); err != nil {
			panic(fmt.Sprintf("host function k8s.io/scheduler.handle.pods.list failed: invalid query: %v", err))
		}
	}
	sel, err := labels.Parse(q.LabelSelector)
	if err != nil {
		panic(fmt.Sprintf("host function k8s.io/scheduler.handle.pods.list failed: %v", err))
	}
	var ms []listed
	for _, raw := range h.Pods {
		p := &corev1.Pod{}
		if err := p.Unmarshal(raw); err != nil {
			panic(err)
		}
		if (q.Namespace == "" || p.Namespace == q.Namespace) && sel.Matches(labels.Set(p.Labels)) {
			ms = append(ms, listed{p.Namespace, p.Name, raw})
		}
	}
	return serve("handle.pods.list", framedInKeyOrder(ms), buf)
}

func Activate(b []byte) {
	h := host()
	h.Calls["handle.activate"]++
	var keys []string
	if err := json.Unmarshal(b, &keys); err != nil {
		panic(fmt.Sprintf("host function k8s.io/scheduler.handle.activate failed: %v", err))
	}
	h.Activated = append(h.Activated, keys...)
}

func Clock(buf []byte) uint32 {
	h := host()
	var ns int64
	if !h.Now.IsZero() {
		ns = h.Now.UnixNano()
	}
	return serve("handle.clock", binary.LittleEndian.AppendUint64(nil, uint64(ns)), buf)
}

// BeginCall starts a new call in the SDK's runtime (set by package guest; hosttest.NewCall).
var BeginCall func()

// listed is an object a list import returns, with its namespace and name.
type listed struct {
	ns, name string
	raw      []byte
}

// framedInKeyOrder is the host's value of a list import (docs/abi.md §14.2, §15.4): the objects in
// namespace/name order, each framed as u32 LE length, then the bytes.
func framedInKeyOrder(ms []listed) []byte {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].ns != ms[j].ns {
			return ms[i].ns < ms[j].ns
		}
		return ms[i].name < ms[j].name
	})
	var v []byte
	for _, m := range ms {
		v = binary.LittleEndian.AppendUint32(v, uint32(len(m.raw)))
		v = append(v, m.raw...)
	}
	return v
}
