package guest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unsafe"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
)

// cycleState is the plugin's CycleState, id 0 (docs/abi.md §14.4); PreFilter empties it, since
// PreFilter starts every cycle.
var cycleState = api.NewCycleState()

// State returns the CycleState of the running call (PreFilter's, or the clone the host names).
func State() api.CycleState { return stateForCall() }

// callContext is what the SDK knows about the running export call. Every export starts with
// beginCall, which resets it; RunFilterPluginsWithNominatedPods saves and restores it around the
// host's re-entrant calls.
type callContext struct {
	seq         uint64
	synced      bool // the mirror was brought up to date in this call
	overlayDone bool
	overlay     *overlay
	state       api.CycleState // nil until the call's state id was asked for
}

var (
	call    callContext
	callSeq uint64
)

func beginCall() {
	callSeq++
	call = callContext{seq: callSeq}
}

func mustPlugin() api.Plugin {
	if Plugin == nil {
		panic("sdk: no plugin registered: call plugin.Set from an init function of the main package")
	}
	return Plugin
}

// status reports s's reason and returns its code (docs/abi.md §6: the reason only for failures).
func status(s *api.Status) int32 {
	code := s.GetCode()
	if code != api.Success && s.Message() != "" {
		imports.ResultStatusReason(s.Message())
	}
	return int32(code)
}

// pack puts hi in the upper and lo in the lower 32 bits of an i64 result.
func pack(hi, lo int32) uint64 { return uint64(uint32(hi))<<32 | uint64(uint32(lo)) }

func nodeName() string { return fetchString(imports.CurrentNodeName) }

// Enqueue sends the plugin's events; with no enqueue export the host uses its default list.
func Enqueue() {
	beginCall()
	if EnqueueV2 != nil && EnqueueV2.Implemented(mustPlugin()) {
		EnqueueV2.Enqueue()
		return
	}
	events := mustPlugin().(api.EnqueueExtensions).EventsToRegister()
	buf := make([]byte, 0, 8*len(events))
	for _, e := range events {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(e.Resource))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(e.ActionType))
	}
	imports.ResultClusterEvents(buf)
}

// PreFilter starts the pod's cycle: it empties the CycleState and runs the plugin's PreFilter.
func PreFilter() int32 {
	beginCall()
	cycleState = api.NewCycleState()
	clones = nil
	preScoreNodes, preScoreList, scoreCursor = nil, nil, 0
	p, ok := mustPlugin().(api.PreFilterPlugin)
	if !ok {
		return int32(api.Success)
	}
	names, s := p.PreFilter(stateForCall(), newCurrentPod())
	if len(names) > 0 {
		var buf []byte
		for _, n := range names {
			buf = append(append(buf, n...), 0)
		}
		imports.ResultNodeNames(buf)
	}
	return status(s)
}

func AddPod() int32 {
	beginCall()
	p := mustPlugin().(api.PreFilterExtensions)
	return status(p.AddPod(stateForCall(), newCurrentPod(), newTargetPod(), callNodeInfo(nodeName())))
}

func RemovePod() int32 {
	beginCall()
	p := mustPlugin().(api.PreFilterExtensions)
	return status(p.RemovePod(stateForCall(), newCurrentPod(), newTargetPod(), callNodeInfo(nodeName())))
}

func Filter() int32 {
	beginCall()
	p := filterer
	if p == nil {
		p = mustPlugin().(api.FilterPlugin)
	}
	return status(p.Filter(stateForCall(), newCurrentPod(), callNodeInfo(nodeName())))
}

func PostFilter() uint64 {
	beginCall()
	raw := fetch(imports.NodeToStatusMap)
	statuses := api.NodeToStatus{}
	if raw != nil {
		if err := json.Unmarshal(raw, &statuses); err != nil {
			panic(fmt.Sprintf("sdk: decoding nodeToStatusMap: %v", err))
		}
	}
	name, mode, s := mustPlugin().(api.PostFilterPlugin).PostFilter(stateForCall(), newCurrentPod(), statuses)
	imports.ResultNominatedNodeName(name)
	return pack(int32(mode), status(s))
}

func PreScore() int32 {
	beginCall()
	raw := fetch(imports.FilteredNodeList)
	names, err := decodeNames(raw)
	if err != nil {
		panic(fmt.Sprintf("sdk: decoding filteredNodeList: %v", err))
	}
	infos := make([]nodeInfo, len(names)) // one allocation for the list, not one per node
	nodes := make([]api.NodeInfo, len(names))
	for i, n := range names {
		infos[i].name = n
		nodes[i] = &infos[i]
	}
	preScoreNodes, preScoreList, scoreCursor = infos, append(preScoreList[:0], raw...), 0
	return status(mustPlugin().(api.PreScorePlugin).PreScore(stateForCall(), newCurrentPod(), nodes))
}

// decodeNames reads the host's JSON array of node names. Node names are DNS subdomains, so the host's
// array is a plain run of quoted names: it is split as such, without encoding/json's reflection (which in
// a wasm guest costs about as much as the rest of a 500-node PreScore). Anything else (escapes, spaces)
// goes through encoding/json, so every valid array is read the same.
func decodeNames(raw []byte) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	if names, ok := splitNames(raw); ok {
		return names, nil
	}
	var names []string
	err := json.Unmarshal(raw, &names)
	return names, err
}

func splitNames(raw []byte) ([]string, bool) {
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' || bytes.IndexByte(raw, '\\') >= 0 {
		return nil, false
	}
	// One string for the whole list; the names are substrings of it, so n names cost one allocation.
	body := string(raw[1 : len(raw)-1])
	names := make([]string, 0, strings.Count(body, ",")+1)
	for len(body) > 0 {
		if body[0] != '"' {
			return nil, false
		}
		end := strings.IndexByte(body[1:], '"')
		if end < 0 {
			return nil, false
		}
		names = append(names, body[1:1+end])
		body = body[2+end:]
		if len(body) > 0 {
			if body[0] != ',' || len(body) == 1 {
				return nil, false
			}
			body = body[1:]
		}
	}
	return names, true
}

func Score() uint64 {
	beginCall()
	p := scorer
	if p == nil {
		p = mustPlugin().(api.ScorePlugin)
	}
	score, s := p.Score(stateForCall(), newCurrentPod(), scoreNode())
	// The ABI carries an int32; clamp rather than wrap so that an out-of-range score stays out of range.
	score = max(math.MinInt32, min(math.MaxInt32, score))
	return pack(int32(score), status(s))
}

// preScoreNodes are the NodeInfos PreScore gave the plugin this cycle, preScoreList the host's list they
// came from; scoreCursor is the one the host is expected to score next.
var (
	preScoreNodes []nodeInfo
	preScoreList  []byte
	scoreCursor   int
)

// scoreNode is the node the host scores now. The host scores the nodes PreScore got, in its order
// (docs/abi.md §4.2), so the next of them is tried first, compared by its bytes: Score then sees the
// NodeInfo PreScore saw (a node decoded there is not decoded again) and allocates nothing. Any other
// name gets a NodeInfo of its own.
func scoreNode() api.NodeInfo { return scoreNodeNamed(string(fetch(imports.CurrentNodeName))) }

func scoreNodeNamed(name string) api.NodeInfo {
	if scoreCursor < len(preScoreNodes) {
		if n := &preScoreNodes[scoreCursor]; n.name == name {
			scoreCursor++
			n.overlayable, n.overlaySeq = true, call.seq
			return n
		}
	}
	return callNodeInfo(name)
}

// scoreBuf holds ScoreNodes' scores, reused from call to call (it is as long as the cluster is wide); the
// host copies them out before the next call.
var scoreBuf []byte

// ScoreNodes is Score for every node of filteredNodeList in one call (docs/abi.md §17 [+]): one crossing
// per pod instead of one per node. The nodes get the NodeInfos PreScore built, as Score's do. The result
// packs the address of the scores (eight little-endian bytes per node, in the list's order) in its high
// half and the status in its low half; the first node whose Score fails ends the call with its status, as
// kube's Score runner stops at it. It needs no import a KSWE host lacks.
func ScoreNodes() uint64 {
	beginCall()
	p := scorer
	if p == nil {
		p = mustPlugin().(api.ScorePlugin)
	}
	state, pod := stateForCall(), newCurrentPod()
	buf := scoreBuf[:0]
	add := func(n api.NodeInfo) *api.Status {
		score, s := p.Score(state, pod, n)
		if s.GetCode() != api.Success {
			return s
		}
		// Clamped as Score clamps: a plugin's answer must not depend on which of the two the host calls.
		buf = binary.LittleEndian.AppendUint64(buf, uint64(max(math.MinInt32, min(math.MaxInt32, score))))
		return nil
	}
	raw := fetch(imports.FilteredNodeList)
	if scoreCursor == 0 && preScoreNodes != nil && bytes.Equal(raw, preScoreList) {
		// PreScore's list, the usual case: its NodeInfos, without reading the names again.
		for i := range preScoreNodes {
			n := &preScoreNodes[i]
			n.overlayable, n.overlaySeq = true, call.seq
			scoreCursor++
			if s := add(n); s != nil {
				return pack(0, status(s))
			}
		}
	} else {
		names, err := decodeNames(raw)
		if err != nil {
			panic(fmt.Sprintf("sdk: decoding filteredNodeList: %v", err))
		}
		for _, name := range names {
			if s := add(scoreNodeNamed(name)); s != nil {
				return pack(0, status(s))
			}
		}
	}
	scoreBuf = buf
	return pack(int32(address(buf)), int32(api.Success))
}

// address is where b's bytes start in the guest's linear memory (under wasip1 a pointer is one).
func address(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

func NormalizeScore() int32 {
	beginCall()
	raw := fetch(imports.NodeScoreList)
	var scores []api.NodeScore
	if raw != nil {
		var err error
		if scores, err = decodeScoreList(raw); err != nil {
			panic(fmt.Sprintf("sdk: decoding nodeScoreList: %v", err))
		}
	}
	s := mustPlugin().(api.ScoreExtensions).NormalizeScore(stateForCall(), newCurrentPod(), scores)
	out := make(map[string]int64, len(scores))
	for _, ns := range scores {
		out[ns.Name] = ns.Score
	}
	buf, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	imports.ResultNormalizedScoreList(buf)
	return status(s)
}

// decodeScoreList reads the host's JSON object keeping its key order, which is the node order.
func decodeScoreList(raw []byte) ([]api.NodeScore, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %q", raw)
	}
	var out []api.NodeScore
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v int64
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, api.NodeScore{Name: t.(string), Score: v})
	}
	return out, nil
}

func Reserve() int32 {
	beginCall()
	return status(mustPlugin().(api.ReservePlugin).Reserve(stateForCall(), newCurrentPod(), nodeName()))
}

func Unreserve() {
	beginCall()
	mustPlugin().(api.ReservePlugin).Unreserve(stateForCall(), newCurrentPod(), nodeName())
}

func Permit() uint64 {
	beginCall()
	s, timeout := mustPlugin().(api.PermitPlugin).Permit(stateForCall(), newCurrentPod(), nodeName())
	ms := timeout / time.Millisecond
	ms = max(0, min(math.MaxUint32, ms))
	return pack(status(s), int32(uint32(ms))) // permit is reversed: status high, timeout low
}

func PreBind() int32 {
	beginCall()
	return status(mustPlugin().(api.PreBindPlugin).PreBind(stateForCall(), newCurrentPod(), nodeName()))
}

func Bind() int32 {
	beginCall()
	return status(mustPlugin().(api.BindPlugin).Bind(stateForCall(), newCurrentPod(), nodeName()))
}

func PostBind() {
	beginCall()
	mustPlugin().(api.PostBindPlugin).PostBind(stateForCall(), newCurrentPod(), nodeName())
}
