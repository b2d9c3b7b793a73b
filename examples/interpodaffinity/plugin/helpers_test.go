//go:build !wasip1

package plugin

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

// The kube test cases in filtering_test.go and scoring_test.go are copied from kube v1.37.2's
// files with their helpers' names; st below is the subset of k8s.io/kubernetes/pkg/scheduler/testing
// they use, so that the cases read as in kube.

type podAffinityKind int

const (
	nilPodAffinity podAffinityKind = iota
	podAffinityWithRequiredReq
	podAffinityWithPreferredReq
	podAffinityWithRequiredPreferredReq
	podAntiAffinityWithRequiredReq
	podAntiAffinityWithPreferredReq
	podAntiAffinityWithRequiredPreferredReq
)

var st = struct {
	PodAffinityWithRequiredReq, PodAffinityWithPreferredReq, PodAffinityWithRequiredPreferredReq             podAffinityKind
	PodAntiAffinityWithRequiredReq, PodAntiAffinityWithPreferredReq, PodAntiAffinityWithRequiredPreferredReq podAffinityKind
	MakePod                                                                                                  func() *podWrapper
	MakeNode                                                                                                 func() *nodeWrapper
}{podAffinityWithRequiredReq, podAffinityWithPreferredReq, podAffinityWithRequiredPreferredReq,
	podAntiAffinityWithRequiredReq, podAntiAffinityWithPreferredReq, podAntiAffinityWithRequiredPreferredReq,
	func() *podWrapper { return &podWrapper{} }, func() *nodeWrapper { return &nodeWrapper{} }}

type podWrapper struct{ v1.Pod }

func (p *podWrapper) Obj() *v1.Pod                   { return &p.Pod }
func (p *podWrapper) Name(s string) *podWrapper      { p.SetName(s); return p }
func (p *podWrapper) UID(s string) *podWrapper       { p.SetUID(typesUID(s)); return p }
func (p *podWrapper) Namespace(s string) *podWrapper { p.SetNamespace(s); return p }
func (p *podWrapper) Node(s string) *podWrapper      { p.Spec.NodeName = s; return p }
func (p *podWrapper) Labels(m map[string]string) *podWrapper {
	for k, v := range m {
		p.Label(k, v)
	}
	return p
}
func (p *podWrapper) Label(k, v string) *podWrapper {
	if p.ObjectMeta.Labels == nil {
		p.ObjectMeta.Labels = map[string]string{}
	}
	p.ObjectMeta.Labels[k] = v
	return p
}

func (p *podWrapper) affinity(topologyKey string, sel *metav1.LabelSelector, kind podAffinityKind) *podWrapper {
	if kind == nilPodAffinity {
		return p
	}
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	term := v1.PodAffinityTerm{LabelSelector: sel, TopologyKey: topologyKey}
	weighted := v1.WeightedPodAffinityTerm{Weight: 1, PodAffinityTerm: term}
	switch kind {
	case podAffinityWithRequiredReq, podAffinityWithPreferredReq, podAffinityWithRequiredPreferredReq:
		if p.Spec.Affinity.PodAffinity == nil {
			p.Spec.Affinity.PodAffinity = &v1.PodAffinity{}
		}
		a := p.Spec.Affinity.PodAffinity
		if kind != podAffinityWithPreferredReq {
			a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, term)
		}
		if kind != podAffinityWithRequiredReq {
			a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution, weighted)
		}
	default:
		if p.Spec.Affinity.PodAntiAffinity == nil {
			p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{}
		}
		a := p.Spec.Affinity.PodAntiAffinity
		if kind != podAntiAffinityWithPreferredReq {
			a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, term)
		}
		if kind != podAntiAffinityWithRequiredReq {
			a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution, weighted)
		}
	}
	return p
}

func selector(op metav1.LabelSelectorOperator, key string, vals []string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: vals}}}
}

func (p *podWrapper) PodAffinityIn(k, tk string, vals []string, kind podAffinityKind) *podWrapper {
	return p.affinity(tk, selector(metav1.LabelSelectorOpIn, k, vals), kind)
}
func (p *podWrapper) PodAffinityNotIn(k, tk string, vals []string, kind podAffinityKind) *podWrapper {
	return p.affinity(tk, selector(metav1.LabelSelectorOpNotIn, k, vals), kind)
}
func (p *podWrapper) PodAffinityExists(k, tk string, kind podAffinityKind) *podWrapper {
	return p.affinity(tk, selector(metav1.LabelSelectorOpExists, k, nil), kind)
}
func (p *podWrapper) PodAntiAffinityIn(k, tk string, vals []string, kind podAffinityKind) *podWrapper {
	return p.affinity(tk, selector(metav1.LabelSelectorOpIn, k, vals), kind)
}
func (p *podWrapper) PodAntiAffinityNotIn(k, tk string, vals []string, kind podAffinityKind) *podWrapper {
	return p.affinity(tk, selector(metav1.LabelSelectorOpNotIn, k, vals), kind)
}
func (p *podWrapper) PodAntiAffinityExists(k, tk string, kind podAffinityKind) *podWrapper {
	return p.affinity(tk, selector(metav1.LabelSelectorOpExists, k, nil), kind)
}

type nodeWrapper struct{ v1.Node }

func (n *nodeWrapper) Obj() *v1.Node              { return &n.Node }
func (n *nodeWrapper) Name(s string) *nodeWrapper { n.SetName(s); return n }
func (n *nodeWrapper) Label(k, v string) *nodeWrapper {
	if n.ObjectMeta.Labels == nil {
		n.ObjectMeta.Labels = map[string]string{}
	}
	n.ObjectMeta.Labels[k] = v
	return n
}

// newHost is the fake host of a snapshot of pods and nodes, as kube's cache.NewSnapshot builds it,
// with the namespaces served as the watched kind. Pods on nodes without a Node object are left out:
// the scheduler's snapshot (and the SDK's mirror) has only nodes with one.
func newHost(t *testing.T, pods []*v1.Pod, nodes []*v1.Node, nss []runtime.Object) *hosttest.Host {
	t.Helper()
	h := &hosttest.Host{Objects: map[string][][]byte{"/v1/namespaces": nil}}
	for _, ns := range nss {
		h.Objects["/v1/namespaces"] = append(h.Objects["/v1/namespaces"], hosttest.Object(t, ns))
	}
	hosttest.Install(t, h)
	var sn []hosttest.SnapshotNode
	for _, n := range nodes {
		s := hosttest.SnapshotNode{Node: n}
		for i, p := range pods {
			if p.Spec.NodeName == n.Name {
				p = p.DeepCopy()
				if p.UID == "" { // kube's NodeInfo keys pods by object, the mirror by uid (or namespace/name)
					p.UID = typesUID(fmt.Sprintf("pod-%d", i))
				}
				s.Pods = append(s.Pods, p)
			}
		}
		sn = append(sn, s)
	}
	hosttest.SetSnapshot(t, h, sn...)
	return h
}

func newPlugin(t *testing.T, config string) *InterPodAffinity {
	t.Helper()
	pl, err := New([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func nodeInfo(t *testing.T, pl *InterPodAffinity, name string) api.NodeInfo {
	t.Helper()
	ni, err := pl.sharedLister.NodeInfos().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return ni
}

// sameStatus compares statuses as kube's tests do with cmp.Diff: code and message, nil being Success.
func sameStatus(a, b *api.Status) bool {
	return a.GetCode() == b.GetCode() && a.Message() == b.Message()
}

func typesUID(s string) types.UID { return types.UID(s) }

func (p *podWrapper) PodAffinity(tk string, sel *metav1.LabelSelector, kind podAffinityKind) *podWrapper {
	return p.affinity(tk, sel, kind)
}
func (p *podWrapper) PodAntiAffinity(tk string, sel *metav1.LabelSelector, kind podAffinityKind) *podWrapper {
	return p.affinity(tk, sel, kind)
}

func (p *podWrapper) NominatedNodeName(s string) *podWrapper {
	p.Status.NominatedNodeName = s
	return p
}
