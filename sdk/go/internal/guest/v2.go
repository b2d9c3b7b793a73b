package guest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
	"github.com/wasmsched/wasmsched/sdk/go/internal/wire"
)

// ABI v2 (docs/abi.md §14). Each host import below is reached only from code a plugin links by
// using the feature (a handle function, the framework package, the prefilterextensions exports), so
// a plugin that uses none stays a v1 guest: the linker drops unreferenced //go:wasmimports.

// --- §14.4 cycle states -------------------------------------------------------------------------

var (
	// clones are this cycle's copies of the CycleState, by id; PreFilter drops them all.
	clones map[uint32]api.CycleState
	// lastCloneID numbers clones across cycles, never reusing an id: a release the host reports
	// late (after the next PreFilter) then names an id that is already gone, never a live one.
	lastCloneID uint32
	// stateID asks the host for cycle_state.id; nil unless clones are linked (EnableClones).
	stateID func() uint32
)

// EnableClones is called by the export package that links `cyclestate_clone`.
func EnableClones() { stateID = hostStateID }

func hostStateID() uint32 { return readU32(imports.CycleStateID) }

func readU32(get func([]byte) uint32) uint32 {
	raw := fetch(get)
	if len(raw) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(raw)
}

// stateForCall is the CycleState the framework passed to the running call. Without a clone in this
// cycle it is PreFilter's, and the host is not asked: Filter and Score, called per node, gain no
// import call in the common case.
func stateForCall() api.CycleState {
	if len(clones) == 0 || stateID == nil {
		return cycleState
	}
	if call.state == nil {
		id := stateID()
		if id == 0 {
			call.state = cycleState
		} else if s := clones[id]; s != nil {
			call.state = s
		} else {
			panic(fmt.Sprintf("sdk: the host named cycle state %d, which this guest does not hold", id))
		}
	}
	return call.state
}

// CloneState serves `cyclestate_clone`: free the released copies, copy the named state, return the
// copy's id (≥ 1), or -1 when the host names a state the guest does not hold.
func CloneState() int32 {
	beginCall()
	if raw := fetch(imports.CycleStateReleased); raw != nil {
		for i := 0; i+4 <= len(raw); i += 4 {
			delete(clones, binary.LittleEndian.Uint32(raw[i:]))
		}
	}
	src := cycleState
	if id := readU32(imports.CycleStateID); id != 0 {
		if src = clones[id]; src == nil {
			status(api.NewStatus(api.Error, fmt.Sprintf("cyclestate_clone: no cycle state %d", id)))
			return -1
		}
	}
	lastCloneID++
	if lastCloneID > 1<<31-1 { // the result is an i32; ids wrap long after any state was freed
		lastCloneID = 1
	}
	if clones == nil {
		clones = map[uint32]api.CycleState{}
	}
	clones[lastCloneID] = src.Clone()
	return int32(lastCloneID)
}

// --- §14.3 queueing hints -------------------------------------------------------------------------

// EnqueueV2 is set by package framework: it serves `enqueue` for plugins with kube's
// EventsToRegister and `queueinghint`.
var EnqueueV2 interface {
	Implemented(p api.Plugin) bool
	Enqueue()
	QueueingHint() int32
}

// QueueingHint serves `queueinghint`.
func QueueingHint() int32 {
	beginCall()
	if EnqueueV2 == nil || !EnqueueV2.Implemented(mustPlugin()) {
		// 2 is an error for the queue (0 and 1 are hints, §14.3): it queues the pod.
		imports.ResultStatusReason("queueinghint: the plugin registers no queueing hints")
		return 2
	}
	return EnqueueV2.QueueingHint()
}

// Status reports s as the call's status, returning its code.
func Status(s *api.Status) int32 { return status(s) }

// Fetch runs a getter with the §5 protocol; the result is valid until the next fetch.
func Fetch(get func([]byte) uint32) []byte { return fetch(get) }

// CurrentPod is the running call's pod.
func CurrentPod() api.PodInfo { return newCurrentPod() }

// --- §14.2 watched objects -----------------------------------------------------------------------

// ObjectQuery is the JSON query of handle.objects.list and handle.objects.get.
type ObjectQuery struct {
	Group         string `json:"group"`
	Version       string `json:"version"`
	Resource      string `json:"resource"`
	Namespace     string `json:"namespace"` // always sent: "" is all namespaces, or a cluster-scoped kind
	Name          string `json:"name,omitempty"`
	LabelSelector string `json:"labelSelector,omitempty"`
}

func (q *ObjectQuery) encode() []byte {
	b, err := json.Marshal(q)
	if err != nil {
		panic(err)
	}
	return b
}

// ListObjects returns the JSON of each matching object, copied.
func ListObjects(q ObjectQuery) [][]byte {
	query := q.encode()
	raw := fetch(func(b []byte) uint32 { return imports.ObjectsList(query, b) })
	var out [][]byte
	for _, e := range wire.List(raw, "handle.objects.list") {
		out = append(out, append([]byte(nil), e...))
	}
	return out
}

// GetObject returns the object's JSON, or nil when there is none.
func GetObject(q ObjectQuery) []byte {
	query := q.encode()
	raw := fetch(func(b []byte) uint32 { return imports.ObjectsGet(query, b) })
	if raw == nil {
		return nil
	}
	return append([]byte(nil), raw...)
}

// --- §14.5 nominated pods -----------------------------------------------------------------------

// NominatedPodsForNode returns the pods nominated to the node, highest priority first, decoded lazily.
func NominatedPodsForNode(name string) []api.PodInfo {
	raw := fetch(func(b []byte) uint32 { return imports.NominatedPodsForNode(name, b) })
	entries := wire.List(raw, "handle.nominated_pods_for_node")
	out := make([]api.PodInfo, len(entries))
	for i, e := range entries {
		out[i] = &mirrorPod{key: "nominated pod", raw: append([]byte(nil), e...)}
	}
	return out
}

// RunFilterPluginsWithNominatedPods asks the host to run the profile's Filter plugins for the
// call's pod on the node, with the call's CycleState. The host may call this guest's `filter` while
// it runs (re-entrant): the call's context is saved and restored around it.
func RunFilterPluginsWithNominatedPods(state api.CycleState, nodeName string) *api.Status {
	if state != stateForCall() {
		return api.NewStatus(api.Error, "RunFilterPluginsWithNominatedPods: the host runs the filters with the "+
			"CycleState of the running call; pass that state")
	}
	saved := call
	raw := fetch(func(b []byte) uint32 { return imports.RunFilterPluginsWithNominatedPods(nodeName, b) })
	call = saved
	if len(raw) < 4 {
		panic(fmt.Sprintf("sdk: malformed handle.run_filter_plugins_with_nominated_pods: %d bytes", len(raw)))
	}
	code := api.Code(int32(binary.LittleEndian.Uint32(raw)))
	r := wire.Reader{B: raw[4:], What: "handle.run_filter_plugins_with_nominated_pods"}
	reason := r.Str()
	if code == api.Success && reason == "" {
		return nil
	}
	return &api.Status{Code: code, Reason: reason}
}
