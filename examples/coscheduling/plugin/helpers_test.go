//go:build !wasip1

package coscheduling

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

// The upstream tests' builders (kube's st.MakePod/MakeNode, scheduler-plugins' tu.MakePodGroup),
// reduced to what the ported tests set.

type podB struct{ p *corev1.Pod }

func makePod(ns, name string) *podB {
	return &podB{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{}}}}
}
func (b *podB) UID(u string) *podB     { b.p.UID = types.UID(u); return b }
func (b *podB) Group(pg string) *podB  { b.p.Labels[PodGroupLabel] = pg; return b }
func (b *podB) Node(n string) *podB    { b.p.Spec.NodeName = n; return b }
func (b *podB) Priority(v int32) *podB { b.p.Spec.Priority = &v; return b }
func (b *podB) Gates(names ...string) *podB {
	for _, n := range names {
		b.p.Spec.SchedulingGates = append(b.p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: n})
	}
	return b
}
func (b *podB) CPU(q string) *podB {
	b.p.Spec.Containers = append(b.p.Spec.Containers, corev1.Container{Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}})
	return b
}
func (b *podB) Obj() *corev1.Pod { return b.p }

type pgB struct{ pg *PodGroup }

func makePG(ns, name string, minMember int32) *pgB {
	return &pgB{&PodGroup{TypeMeta: metav1.TypeMeta{APIVersion: GroupName + "/v1alpha1", Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: PodGroupSpec{MinMember: minMember}}}
}
func (b *pgB) Time(t time.Time) *pgB { b.pg.CreationTimestamp = metav1.NewTime(t); return b }
func (b *pgB) MinResources(cpu string) *pgB {
	b.pg.Spec.MinResources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	return b
}
func (b *pgB) Timeout(s int32) *pgB { b.pg.Spec.ScheduleTimeoutSeconds = &s; return b }
func (b *pgB) Obj() *PodGroup       { return b.pg }

func makeNode(name, cpu string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")},
	}}
}

const pgKey = "scheduling.x-k8s.io/v1alpha1/podgroups"

// cluster is a fake host with the PodGroups, the pods the informer knows, and nodes with their pods
// (each pod with a node name is on that node in the snapshot), at clock now.
type cluster struct {
	h   *hosttest.Host
	now time.Time
}

func newCluster(t *testing.T, pgs []*PodGroup, pods []*corev1.Pod, nodes ...*corev1.Node) *cluster {
	t.Helper()
	c := &cluster{h: &hosttest.Host{PluginName: Name, Objects: map[string][][]byte{pgKey: nil}},
		now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	c.h.Now = c.now
	hosttest.Install(t, c.h)
	for _, pg := range pgs {
		c.h.Objects[pgKey] = append(c.h.Objects[pgKey], hosttest.Object(t, pg))
	}
	hosttest.SetPods(t, c.h, pods...)
	var sn []hosttest.SnapshotNode
	for _, n := range nodes {
		s := hosttest.SnapshotNode{Node: n, Requested: &api.Resource{}}
		for _, p := range pods {
			if p.Spec.NodeName == n.Name {
				s.Pods = append(s.Pods, p)
				for _, ctr := range p.Spec.Containers {
					s.Requested.MilliCPU += ctr.Resources.Requests.Cpu().MilliValue()
				}
			}
		}
		sn = append(sn, s)
	}
	hosttest.SetSnapshot(t, c.h, sn...)
	return c
}

// plugin builds Coscheduling with upstream's defaults and the fake host's clock.
func (c *cluster) plugin(t *testing.T, config string) *Coscheduling {
	t.Helper()
	pl, err := NewWithClock([]byte(config), func() time.Time { return c.h.Now })
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func qpi(p *corev1.Pod, initial *time.Time) api.QueuedPodInfo {
	return api.QueuedPodInfo{PodInfo: api.PodOf(p), InitialAttemptTimestamp: initial}
}

func ptrTime(tm time.Time) *time.Time { return &tm }

func mustJSON(t *testing.T, v any) []byte { return hosttest.Object(t, v) }
