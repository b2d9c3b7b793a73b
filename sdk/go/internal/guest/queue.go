package guest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
	"github.com/wasmsched/wasmsched/sdk/go/internal/wire"
)

// ABI v2: the queue and gangs (docs/abi.md §15). As in v2.go, each import is reached only from the
// code of its feature: the exports of exports/preenqueue and exports/queuesort, and the handle
// functions a plugin calls.

// PreEnqueue serves `preenqueue` (§15.1): the plugin's status for the call's pod; a status other
// than Success gates the pod with its reason.
func PreEnqueue() int32 {
	beginCall()
	return status(mustPlugin().(api.PreEnqueuePlugin).PreEnqueue(newCurrentPod()))
}

// queuedPodInfo is queued_pod_info's JSON (§15.2).
type queuedPodInfo struct {
	Timestamp               int64  `json:"timestamp"`
	InitialAttemptTimestamp *int64 `json:"initialAttemptTimestamp"`
	Attempts                int    `json:"attempts"`
}

// QueueSort serves `queuesort` (§15.2): it sends the plugin's key for the call's pod with
// result.sort_key and returns 0. A plugin that panics traps the call: the host logs it and sorts the
// pod after every pod with a key.
func QueueSort() int32 {
	beginCall()
	p := mustPlugin().(api.QueueSortPlugin)
	raw := fetch(imports.QueuedPodInfo)
	var q queuedPodInfo
	if err := json.Unmarshal(raw, &q); err != nil {
		panic(fmt.Sprintf("sdk: decoding queued_pod_info: %v", err))
	}
	info := api.QueuedPodInfo{PodInfo: newCurrentPod(), Timestamp: time.Unix(0, q.Timestamp),
		Attempts: q.Attempts}
	if q.InitialAttemptTimestamp != nil {
		t := time.Unix(0, *q.InitialAttemptTimestamp)
		info.InitialAttemptTimestamp = &t
	}
	key := p.SortKey(info)
	imports.ResultSortKey(key.Bytes())
	return 0
}

// --- §15.3 waiting pods -------------------------------------------------------------------------

// waitingPod is an api.WaitingPod of handle.waiting_pods.
type waitingPod struct {
	pod     *corev1.Pod
	pending []string
}

func (w *waitingPod) GetPod() *corev1.Pod         { return w.pod }
func (w *waitingPod) GetPendingPlugins() []string { return w.pending }

// PodKey is the key the host knows a pod by (docs/abi.md §1): its uid, or namespace/name.
func PodKey(p *corev1.Pod) string {
	if p.UID != "" {
		return string(p.UID)
	}
	return p.Namespace + "/" + p.Name
}

type waitingQuery struct {
	UID     string `json:"uid"`
	Plugin  string `json:"plugin,omitempty"`
	Message string `json:"message,omitempty"`
}

func (q waitingQuery) encode() []byte {
	b, err := json.Marshal(q)
	if err != nil {
		panic(err)
	}
	return b
}

func (w *waitingPod) Allow(pluginName string) {
	if imports.WaitingPodAllow(waitingQuery{UID: PodKey(w.pod), Plugin: pluginName}.encode()) == 1 {
		w.pending = slices.DeleteFunc(slices.Clone(w.pending), func(p string) bool { return p == pluginName })
	}
}

func (w *waitingPod) Reject(pluginName, msg string) {
	if imports.WaitingPodReject(waitingQuery{UID: PodKey(w.pod), Plugin: pluginName, Message: msg}.encode()) == 1 {
		w.pending = nil
	}
}

// WaitingPods returns the pods waiting at Permit, in the host's (namespace/name) order.
func WaitingPods() []api.WaitingPod {
	raw := fetch(imports.WaitingPods)
	r := wire.Reader{B: raw, What: "handle.waiting_pods"}
	var out []api.WaitingPod
	for !r.Done() {
		pod := sharedPod(r.Bytes(), "a waiting pod")
		w := &waitingPod{pod: pod}
		if err := json.Unmarshal(r.Bytes(), &w.pending); err != nil {
			panic(fmt.Sprintf("sdk: decoding the pending plugins of waiting pod %s: %v", PodKey(pod), err))
		}
		out = append(out, w)
	}
	return out
}

// --- §15.4 pods and activation ------------------------------------------------------------------

// PodQuery is handle.pods.list's query.
type PodQuery struct {
	Namespace     string `json:"namespace,omitempty"`
	LabelSelector string `json:"labelSelector,omitempty"`
}

// listedPods keeps the pods handle.pods.list and handle.waiting_pods returned, decoded, by their bytes:
// a pod listed again unchanged is not decoded again (decoding one costs about 65 µs in a guest; a gang
// plugin lists the same group's pods several times per pod). Emptied when it reaches listedPodsMax
// entries.
var listedPods = map[string]*corev1.Pod{}

const listedPodsMax = 4096

// sharedPod is the pod of these bytes, decoded once per version; read only.
func sharedPod(raw []byte, what string) *corev1.Pod {
	if p, ok := listedPods[string(raw)]; ok {
		return p
	}
	p := &corev1.Pod{}
	if err := p.Unmarshal(raw); err != nil {
		panic(fmt.Sprintf("sdk: decoding %s: %v", what, err))
	}
	if len(listedPods) >= listedPodsMax {
		clear(listedPods)
	}
	listedPods[string(raw)] = p
	return p
}

// ListPods returns the decoded pods the host lists for q; shared with later calls, read only.
func ListPods(q PodQuery) []*corev1.Pod {
	query, err := json.Marshal(q)
	if err != nil {
		panic(err)
	}
	raw := fetch(func(b []byte) uint32 { return imports.PodsList(query, b) })
	entries := wire.List(raw, "handle.pods.list")
	out := make([]*corev1.Pod, len(entries))
	for i, e := range entries {
		out[i] = sharedPod(e, "a pod of handle.pods.list")
	}
	return out
}

// Activate sends the keys ("namespace/name"), sorted, with handle.activate; nothing for none.
func Activate(keys []string) {
	if len(keys) == 0 {
		return
	}
	sort.Strings(keys)
	b, err := json.Marshal(keys)
	if err != nil {
		panic(err)
	}
	imports.Activate(b)
}

// --- §15.5 the clock ----------------------------------------------------------------------------

// Now is the scheduler's clock.
func Now() time.Time {
	raw := fetch(imports.Clock)
	if len(raw) < 8 {
		panic(fmt.Sprintf("sdk: malformed handle.clock: %d bytes", len(raw)))
	}
	return time.Unix(0, int64(binary.LittleEndian.Uint64(raw)))
}
