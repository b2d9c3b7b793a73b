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

// NewCycleState returns an empty CycleState, for tests of plugin packages.
func NewCycleState() CycleState { return mapState{} }

type mapState map[string]any

func (m mapState) Read(key string) (any, bool) { v, ok := m[key]; return v, ok }
func (m mapState) Write(key string, val any)   { m[key] = val }
func (m mapState) Delete(key string)           { delete(m, key) }
