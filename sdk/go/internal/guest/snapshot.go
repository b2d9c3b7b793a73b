package guest

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
	"github.com/wasmsched/wasmsched/sdk/go/internal/wire"
)

// The SDK's mirror of the scheduler's snapshot (docs/abi.md §14.1): nodes with their pods and sums,
// brought up to date by pulling handle.snapshot.changes at most once per call, the first time the
// plugin reads it. Pods are kept as the host's bytes and decoded only when a plugin calls Pod(): a
// guest decode costs about 65 µs, and most plugins look at few of the pods they are given.

// PodsDecoded counts mirror pods decoded since the guest started, for tests of the lazy decoding.
var PodsDecoded int

// mirrorPod is a pod of the snapshot (or a nominated pod): the host's bytes, decoded on first Pod().
type mirrorPod struct {
	key   string
	raw   []byte
	flags byte
	pod   *corev1.Pod
}

func (p *mirrorPod) Pod() *corev1.Pod {
	if p.pod == nil {
		pod := &corev1.Pod{}
		if err := pod.Unmarshal(p.raw); err != nil {
			panic(fmt.Sprintf("sdk: decoding pod %s from the host: %v", p.key, err))
		}
		p.pod = pod
		PodsDecoded++
	}
	return p.pod
}

// podSet is a node's pods with kube's two affinity subsets, kept from the records' flags so that
// listing them decodes nothing.
type podSet struct {
	all, affinity, antiAffinity []api.PodInfo
	index                       map[string]*mirrorPod
}

func removeFrom(s []api.PodInfo, p *mirrorPod) []api.PodInfo {
	for i, q := range s {
		if q.(*mirrorPod) == p {
			// kube's NodeInfo.RemovePod: the last pod takes the removed one's place.
			last := len(s) - 1
			s[i] = s[last]
			s[last] = nil
			return s[:last]
		}
	}
	return s
}

// put adds p, replacing the pod of the same key (kube's update: remove, then add).
func (s *podSet) put(p *mirrorPod) {
	if s.index == nil {
		s.index = map[string]*mirrorPod{}
	}
	if old := s.index[p.key]; old != nil {
		s.remove(old)
	}
	s.index[p.key] = p
	s.all = append(s.all, p)
	if p.flags&wire.FlagAffinity != 0 {
		s.affinity = append(s.affinity, p)
	}
	if p.flags&wire.FlagRequiredAntiAffinity != 0 {
		s.antiAffinity = append(s.antiAffinity, p)
	}
}

func (s *podSet) remove(p *mirrorPod) {
	delete(s.index, p.key)
	s.all = removeFrom(s.all, p)
	if p.flags&wire.FlagAffinity != 0 {
		s.affinity = removeFrom(s.affinity, p)
	}
	if p.flags&wire.FlagRequiredAntiAffinity != 0 {
		s.antiAffinity = removeFrom(s.antiAffinity, p)
	}
}

func (s *podSet) removeKey(key string) {
	if p := s.index[key]; p != nil {
		s.remove(p)
	}
}

func (s *podSet) clone() podSet {
	c := podSet{
		all:          append([]api.PodInfo(nil), s.all...),
		affinity:     append([]api.PodInfo(nil), s.affinity...),
		antiAffinity: append([]api.PodInfo(nil), s.antiAffinity...),
		index:        make(map[string]*mirrorPod, len(s.index)),
	}
	for k, v := range s.index {
		c.index[k] = v
	}
	return c
}

// sums are kube's NodeInfo sums as the host sends them; decoded on first read.
type sums struct {
	raw     []byte
	decoded *nodeSums
}

type nodeSums struct {
	Requested        api.Resource `json:"requested"`
	NonZeroRequested api.Resource `json:"nonZeroRequested"`
	Allocatable      api.Resource `json:"allocatable"`
}

func (s *sums) get() *nodeSums {
	if s.decoded == nil {
		s.decoded = &nodeSums{}
		if len(s.raw) > 0 {
			if err := json.Unmarshal(s.raw, s.decoded); err != nil {
				panic(fmt.Sprintf("sdk: decoding node resources from the host: %v", err))
			}
		}
	}
	return s.decoded
}

func (s *sums) set(raw []byte) {
	if s.decoded != nil && bytes.Equal(s.raw, raw) {
		return
	}
	s.raw, s.decoded = bytes.Clone(raw), nil
}

// mirrorNode is a node of the mirror; it is the api.NodeInfo the snapshot lister hands out.
type mirrorNode struct {
	name    string
	nodeRaw []byte
	node    *corev1.Node
	sums    sums
	pods    podSet
}

func (m *mirrorNode) Name() string { return m.name }

func (m *mirrorNode) Node() *corev1.Node {
	if m.node == nil && len(m.nodeRaw) > 0 {
		n := &corev1.Node{}
		if err := n.Unmarshal(m.nodeRaw); err != nil {
			panic(fmt.Sprintf("sdk: decoding node %s from the host: %v", m.name, err))
		}
		m.node = n
	}
	return m.node
}

func (m *mirrorNode) ImageStates() map[string]api.ImageStateSummary { return imageStates(m.name) }
func (m *mirrorNode) GetPods() []api.PodInfo                        { return m.pods.all }
func (m *mirrorNode) PodsWithAffinity() []api.PodInfo               { return m.pods.affinity }
func (m *mirrorNode) PodsWithRequiredAntiAffinity() []api.PodInfo   { return m.pods.antiAffinity }
func (m *mirrorNode) Requested() *api.Resource                      { return &m.sums.get().Requested }
func (m *mirrorNode) NonZeroRequested() *api.Resource               { return &m.sums.get().NonZeroRequested }
func (m *mirrorNode) Allocatable() *api.Resource                    { return &m.sums.get().Allocatable }

type mirrorState struct {
	nodes   map[string]*mirrorNode
	all     []api.NodeInfo         // in the order the nodes first came
	podNode map[string]*mirrorNode // pod key → its node
	// The affinity lists, rebuilt after a change when first asked for.
	listsValid                bool
	withAffinity, withAntiAff []api.NodeInfo
}

var mirror = newMirror()

func newMirror() *mirrorState {
	return &mirrorState{nodes: map[string]*mirrorNode{}, podNode: map[string]*mirrorNode{}}
}

// Sync brings the mirror to the snapshot of the running call, once per call.
func Sync() *mirrorState {
	if call.synced {
		return mirror
	}
	call.synced = true
	for {
		raw := fetch(imports.SnapshotChanges)
		if raw == nil {
			break
		}
		mirror.apply(raw[1:])
		if raw[0] == 0 {
			break
		}
	}
	return mirror
}

func (ms *mirrorState) apply(b []byte) {
	r := wire.Reader{B: b, What: "handle.snapshot.changes"}
	for !r.Done() {
		ms.listsValid = false
		switch kind := r.Byte(); kind {
		case wire.Node:
			name := r.Str()
			node, res := r.Bytes(), r.Bytes()
			m := ms.nodes[name]
			if m == nil {
				m = &mirrorNode{name: name}
				ms.nodes[name] = m
				ms.all = append(ms.all, m)
			}
			if !bytes.Equal(m.nodeRaw, node) {
				m.nodeRaw, m.node = bytes.Clone(node), nil
			}
			m.sums.set(res)
		case wire.NodeGone:
			name := r.Str()
			m := ms.nodes[name]
			if m == nil {
				continue
			}
			for key := range m.pods.index {
				delete(ms.podNode, key)
			}
			delete(ms.nodes, name)
			for i, n := range ms.all {
				if n == m {
					ms.all = append(ms.all[:i], ms.all[i+1:]...)
					break
				}
			}
		case wire.Pod:
			nodeName, key, flags, pod := r.Str(), r.Str(), r.Byte(), r.Bytes()
			m := ms.nodes[nodeName]
			if m == nil {
				panic(fmt.Sprintf("sdk: malformed handle.snapshot.changes: pod %s on node %s before the node", key, nodeName))
			}
			if prev := ms.podNode[key]; prev != nil && prev != m {
				prev.pods.removeKey(key)
			}
			ms.podNode[key] = m
			m.pods.put(&mirrorPod{key: key, raw: bytes.Clone(pod), flags: flags})
		case wire.PodGone:
			nodeName, key := r.Str(), r.Str()
			if m := ms.nodes[nodeName]; m != nil {
				m.pods.removeKey(key)
				if ms.podNode[key] == m {
					delete(ms.podNode, key)
				}
			}
		case wire.Reset:
			*ms = *newMirror()
		default:
			panic(fmt.Sprintf("sdk: malformed handle.snapshot.changes: unknown record 0x%02x", kind))
		}
	}
}

// List is the snapshot's nodes; the slice is shared.
func (ms *mirrorState) List() []api.NodeInfo { return ms.all }

// Get is the named node, or nil.
func (ms *mirrorState) Get(name string) api.NodeInfo {
	if m := ms.nodes[name]; m != nil {
		return m
	}
	return nil
}

func (ms *mirrorState) lists() {
	if ms.listsValid {
		return
	}
	ms.withAffinity, ms.withAntiAff = ms.withAffinity[:0], ms.withAntiAff[:0]
	for _, n := range ms.all {
		m := n.(*mirrorNode)
		if len(m.pods.affinity) > 0 {
			ms.withAffinity = append(ms.withAffinity, m)
		}
		if len(m.pods.antiAffinity) > 0 {
			ms.withAntiAff = append(ms.withAntiAff, m)
		}
	}
	ms.listsValid = true
}

// HavePodsWithAffinityList is the nodes with a pod with affinity, in List's order.
func (ms *mirrorState) HavePodsWithAffinityList() []api.NodeInfo {
	ms.lists()
	return ms.withAffinity
}

// HavePodsWithRequiredAntiAffinityList is the nodes with a pod with required anti-affinity.
func (ms *mirrorState) HavePodsWithRequiredAntiAffinityList() []api.NodeInfo {
	ms.lists()
	return ms.withAntiAff
}

// overlay is the call's NodeInfo where it differs from the snapshot's node (§14.1).
type overlay struct {
	pods podSet
	sums sums
}

// callOverlay fetches, once per call, how the call's NodeInfo differs from the mirror's node of the
// same name; nil when it does not.
func callOverlay(m *mirrorNode) *overlay {
	if call.overlayDone {
		return call.overlay
	}
	call.overlayDone = true
	raw := fetch(imports.NodeInfoOverlay)
	if raw == nil {
		return nil
	}
	ov := &overlay{}
	if m != nil {
		ov.pods = m.pods.clone()
		ov.sums = m.sums
	}
	r := wire.Reader{B: raw, What: "handle.node_info.overlay"}
	for !r.Done() {
		switch kind := r.Byte(); kind {
		case wire.Pod:
			_, key, flags, pod := r.Str(), r.Str(), r.Byte(), r.Bytes()
			ov.pods.put(&mirrorPod{key: key, raw: bytes.Clone(pod), flags: flags})
		case wire.PodGone:
			_, key := r.Str(), r.Str()
			ov.pods.removeKey(key)
		case wire.Sums:
			ov.sums = sums{}
			ov.sums.set(r.Bytes())
		default:
			panic(fmt.Sprintf("sdk: malformed handle.node_info.overlay: unknown record 0x%02x", kind))
		}
	}
	call.overlay = ov
	return ov
}

// v2 views of the call's lazy nodeInfo: the mirror's node, through the call's overlay when this
// NodeInfo is the one the framework passed to this call.

func (n *nodeInfo) podSet() *podSet {
	ms := Sync()
	m := ms.nodes[n.name]
	if n.overlayable && n.overlaySeq == call.seq {
		if ov := callOverlay(m); ov != nil {
			return &ov.pods
		}
	}
	if m == nil {
		return &podSet{}
	}
	return &m.pods
}

func (n *nodeInfo) sums() *nodeSums {
	ms := Sync()
	m := ms.nodes[n.name]
	if n.overlayable && n.overlaySeq == call.seq {
		if ov := callOverlay(m); ov != nil {
			return ov.sums.get()
		}
	}
	if m == nil {
		return &nodeSums{}
	}
	return m.sums.get()
}

func (n *nodeInfo) GetPods() []api.PodInfo                      { return n.podSet().all }
func (n *nodeInfo) PodsWithAffinity() []api.PodInfo             { return n.podSet().affinity }
func (n *nodeInfo) PodsWithRequiredAntiAffinity() []api.PodInfo { return n.podSet().antiAffinity }
func (n *nodeInfo) Requested() *api.Resource                    { return &n.sums().Requested }
func (n *nodeInfo) NonZeroRequested() *api.Resource             { return &n.sums().NonZeroRequested }
func (n *nodeInfo) Allocatable() *api.Resource                  { return &n.sums().Allocatable }
