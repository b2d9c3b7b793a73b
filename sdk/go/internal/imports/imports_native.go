//go:build !wasip1

package imports

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
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
