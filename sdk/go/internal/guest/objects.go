package guest

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/internal/imports"
)

// decoded keeps the last bytes a getter returned with their decoding, so that a pod or node is
// decoded once for as long as the host sends the same bytes (a pod for its whole cycle).
type decoded[T any] struct {
	raw []byte
	obj *T
}

func (d *decoded[T]) get(raw []byte, unmarshal func(*T, []byte) error, what string) *T {
	if d.obj != nil && bytes.Equal(d.raw, raw) {
		return d.obj
	}
	obj := new(T)
	if err := unmarshal(obj, raw); err != nil {
		panic(fmt.Sprintf("sdk: decoding %s from the host: %v", what, err))
	}
	d.raw, d.obj = append(d.raw[:0], raw...), obj
	return obj
}

func unmarshalPod(p *corev1.Pod, b []byte) error   { return p.Unmarshal(b) }
func unmarshalNode(n *corev1.Node, b []byte) error { return n.Unmarshal(b) }
func unmarshalNodeList(l *corev1.NodeList, b []byte) error {
	return l.Unmarshal(b)
}

var (
	currentPodCache decoded[corev1.Pod]
	targetPodCache  decoded[corev1.Pod]
	nodeCache       = map[string]*decoded[corev1.Node]{}
	nodeListCache   decoded[corev1.NodeList]
	// Image states change far less often than pods are scheduled: decode them once per change.
	imageCache = map[string]*decoded[map[string]api.ImageStateSummary]{}
)

// lazyPod asks the host for its bytes at the first Get of a call.
type lazyPod struct {
	get   func([]byte) uint32
	cache *decoded[corev1.Pod]
	pod   *corev1.Pod
	done  bool
}

func (p *lazyPod) Pod() *corev1.Pod {
	if !p.done {
		p.done = true
		if raw := fetch(p.get); raw != nil {
			p.pod = p.cache.get(raw, unmarshalPod, "Pod")
		}
	}
	return p.pod
}

func newCurrentPod() api.PodInfo { return newLazyPod(imports.CurrentPod, &currentPodCache) }
func newTargetPod() api.PodInfo  { return newLazyPod(imports.TargetPod, &targetPodCache) }

// podChunk: PodInfos and NodeInfos are carved from chunks of this many, since Filter and Score make
// one per node and an allocation is dear in a wasm guest. Each is still a value of its own that a
// plugin may keep.
const podChunk = 64

// carve hands out the next zero value of *free, a new chunk when it is used up.
func carve[T any](free *[]T) *T {
	if len(*free) == 0 {
		*free = make([]T, podChunk)
	}
	v := &(*free)[0]
	*free = (*free)[1:]
	return v
}

var podFree []lazyPod

func newLazyPod(get func([]byte) uint32, cache *decoded[corev1.Pod]) *lazyPod {
	p := carve(&podFree)
	p.get, p.cache = get, cache
	return p
}

// nodeInfo is a node of the snapshot by name; the node and its images are fetched on first use.
type nodeInfo struct {
	name       string
	node       *corev1.Node
	nodeDone   bool
	images     map[string]api.ImageStateSummary
	imagesDone bool
	// overlayable: this is the NodeInfo the framework passed to call overlaySeq (filter, score,
	// addpod, removepod), so its pods and sums are the mirror's with the call's overlay (§14.1).
	overlayable bool
	overlaySeq  uint64
}

// NewNodeInfo returns the lazy NodeInfo of a node name.
func NewNodeInfo(name string) api.NodeInfo {
	n := carve(&nodeFree)
	n.name = name
	return n
}

var nodeFree []nodeInfo // NodeInfos for Filter's nodes

func (n *nodeInfo) Name() string { return n.name }

func (n *nodeInfo) Node() *corev1.Node {
	if !n.nodeDone {
		n.nodeDone = true
		name := n.name
		if raw := fetch(func(b []byte) uint32 { return imports.Node(name, b) }); raw != nil {
			c := nodeCache[name]
			if c == nil {
				c = &decoded[corev1.Node]{}
				nodeCache[name] = c
			}
			n.node = c.get(raw, unmarshalNode, "Node "+name)
		}
	}
	return n.node
}

// callNodeInfo is the NodeInfo the framework passed to the running call.
func callNodeInfo(name string) *nodeInfo {
	n := carve(&nodeFree)
	n.name, n.overlayable, n.overlaySeq = name, true, call.seq
	return n
}

func (n *nodeInfo) ImageStates() map[string]api.ImageStateSummary {
	if !n.imagesDone {
		n.imagesDone = true
		n.images = imageStates(n.name)
	}
	return n.images
}

// imageStates asks the host for a node's image states, decoded once per change.
func imageStates(name string) map[string]api.ImageStateSummary {
	raw := fetch(func(b []byte) uint32 { return imports.NodeImageStates(name, b) })
	if raw == nil || string(raw) == "null" {
		return nil
	}
	c := imageCache[name]
	if c == nil {
		c = &decoded[map[string]api.ImageStateSummary]{}
		imageCache[name] = c
	}
	return *c.get(raw, unmarshalImageStates, "nodeImageStates of "+name)
}

func unmarshalImageStates(m *map[string]api.ImageStateSummary, b []byte) error {
	return json.Unmarshal(b, m)
}

// ListNodeInfos returns every node of the snapshot in the host's order, nodes already decoded.
func ListNodeInfos() []api.NodeInfo {
	raw := fetch(imports.NodeList)
	if raw == nil {
		return nil
	}
	list := nodeListCache.get(raw, unmarshalNodeList, "NodeList")
	out := make([]api.NodeInfo, len(list.Items))
	for i := range list.Items {
		out[i] = &nodeInfo{name: list.Items[i].Name, node: &list.Items[i], nodeDone: true}
	}
	return out
}
