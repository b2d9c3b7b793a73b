package api

import corev1 "k8s.io/api/core/v1"

// PodOf wraps an already decoded pod, for tests of plugin packages.
func PodOf(p *corev1.Pod) PodInfo { return decodedPod{p} }

type decodedPod struct{ p *corev1.Pod }

func (d decodedPod) Pod() *corev1.Pod { return d.p }

// NodeInfoOf wraps a node and its image states, for tests of plugin packages.
func NodeInfoOf(n *corev1.Node, images map[string]ImageStateSummary) NodeInfo {
	return decodedNodeInfo{n, images}
}

type decodedNodeInfo struct {
	n      *corev1.Node
	images map[string]ImageStateSummary
}

func (d decodedNodeInfo) Name() string {
	if d.n == nil {
		return ""
	}
	return d.n.Name
}
func (d decodedNodeInfo) Node() *corev1.Node                        { return d.n }
func (d decodedNodeInfo) ImageStates() map[string]ImageStateSummary { return d.images }
func (d decodedNodeInfo) GetPods() []PodInfo                        { return nil }
func (d decodedNodeInfo) PodsWithAffinity() []PodInfo               { return nil }
func (d decodedNodeInfo) PodsWithRequiredAntiAffinity() []PodInfo   { return nil }
func (d decodedNodeInfo) Requested() *Resource                      { return &Resource{} }
func (d decodedNodeInfo) NonZeroRequested() *Resource               { return &Resource{} }
func (d decodedNodeInfo) Allocatable() *Resource                    { return &Resource{} }

// NewCycleState returns an empty CycleState, for tests of plugin packages; the SDK's runtime uses it
// too.
func NewCycleState() CycleState { return &cycleState{} }

// smallState is how many keys a cycle state holds in a slice before it moves them to a map. A state
// holds a few keys, read once per node in Filter and Score: a scan over a few entries, where a key is
// usually the same constant string (equal pointers), costs less in a wasm guest than hashing the key.
const smallState = 16

type stateEntry struct {
	key string
	val any
}

type cycleState struct {
	small []stateEntry
	big   map[string]any // instead of small once it has grown past smallState
}

func (c *cycleState) Read(key string) (any, bool) {
	if c.big != nil {
		v, ok := c.big[key]
		return v, ok
	}
	for i := range c.small {
		if c.small[i].key == key {
			return c.small[i].val, true
		}
	}
	return nil, false
}

func (c *cycleState) Write(key string, val any) {
	if c.big != nil {
		c.big[key] = val
		return
	}
	for i := range c.small {
		if c.small[i].key == key {
			c.small[i].val = val
			return
		}
	}
	if len(c.small) < smallState {
		c.small = append(c.small, stateEntry{key, val})
		return
	}
	c.big = make(map[string]any, 2*smallState)
	for _, e := range c.small {
		c.big[e.key] = e.val
	}
	c.big[key] = val
	c.small = nil
}

// Clone follows kube's CycleState.Clone: StateData values are cloned, others shared (kube's state
// holds only StateData; a guest's may hold anything, and sharing is what a copy of the map gives).
func (c *cycleState) Clone() CycleState {
	out := &cycleState{}
	clone := func(v any) any {
		if sd, ok := v.(StateData); ok {
			return sd.Clone()
		}
		return v
	}
	if c.big != nil {
		out.big = make(map[string]any, len(c.big))
		for k, v := range c.big {
			out.big[k] = clone(v)
		}
		return out
	}
	out.small = make([]stateEntry, len(c.small), max(len(c.small), 4))
	for i, e := range c.small {
		out.small[i] = stateEntry{e.key, clone(e.val)}
	}
	return out
}

func (c *cycleState) Delete(key string) {
	if c.big != nil {
		delete(c.big, key)
		return
	}
	for i := range c.small {
		if c.small[i].key == key {
			last := len(c.small) - 1
			c.small[i] = c.small[last]
			c.small[last] = stateEntry{} // drop the reference for the collector
			c.small = c.small[:last]
			return
		}
	}
}
