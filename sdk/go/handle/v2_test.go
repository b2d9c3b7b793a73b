//go:build !wasip1

package handle

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

func nodeNames(nodes []api.NodeInfo) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name())
	}
	return out
}

func TestSnapshotSharedLister(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{})
	anti := newPod("ns", "anti", "u2")
	anti.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "zone"}}}}
	hosttest.SetSnapshot(t, h,
		hosttest.SnapshotNode{Node: newNode("n1"), Pods: []*corev1.Pod{newPod("ns", "plain", "u1")}},
		hosttest.SnapshotNode{Node: newNode("n2"), Pods: []*corev1.Pod{anti}})
	lister := SnapshotSharedLister().NodeInfos()
	all, err := lister.List()
	if err != nil || !slices.Equal(nodeNames(all), []string{"n1", "n2"}) {
		t.Fatalf("List: %v, %v", nodeNames(all), err)
	}
	aff, _ := lister.HavePodsWithAffinityList()
	anti2, _ := lister.HavePodsWithRequiredAntiAffinityList()
	if !slices.Equal(nodeNames(aff), []string{"n2"}) || !slices.Equal(nodeNames(anti2), []string{"n2"}) {
		t.Fatalf("affinity lists %v %v", nodeNames(aff), nodeNames(anti2))
	}
	n2, err := lister.Get("n2")
	if err != nil || n2.Node().Name != "n2" || n2.GetPods()[0].Pod().Name != "anti" {
		t.Fatalf("Get(n2): %v", err)
	}
	if _, err := lister.Get("zz"); err == nil || err.Error() != `nodeinfo not found for node name "zz"` {
		t.Fatalf("Get(zz): %v", err)
	}
	if h.Calls["handle.snapshot.changes"] != 1 {
		t.Fatalf("%d pulls in one call", h.Calls["handle.snapshot.changes"])
	}
}

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func widget(ns, name string, lbls map[string]string) map[string]any {
	l := map[string]any{}
	for k, v := range lbls {
		l[k] = v
	}
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": ns, "name": name, "labels": l}, "spec": map[string]any{"size": 3}}
}

func TestObjects(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{Objects: map[string][][]byte{
		"example.com/v1/widgets": {
			hosttest.Object(t, widget("b", "w2", map[string]string{"tier": "web"})),
			hosttest.Object(t, widget("a", "w1", map[string]string{"tier": "db"})),
			hosttest.Object(t, widget("a", "w3", map[string]string{"tier": "web"})),
		}}})
	l := Objects(widgets)
	all, err := l.List("", nil)
	if err != nil || len(all) != 3 || all[0].GetName() != "w1" || all[2].GetName() != "w2" {
		t.Fatalf("List all: %v %v", all, err)
	}
	web, _ := l.List("", labels.SelectorFromSet(labels.Set{"tier": "web"}))
	inA, _ := l.List("a", labels.Everything())
	if len(web) != 2 || len(inA) != 2 {
		t.Fatalf("by selector %d, in namespace a %d", len(web), len(inA))
	}
	calls := h.Calls["handle.objects.list"]
	if none, _ := l.List("", labels.Nothing()); len(none) != 0 || h.Calls["handle.objects.list"] != calls {
		t.Fatalf("labels.Nothing() listed %d objects, asking the host", len(none))
	}
	w, err := l.Get("a", "w3")
	if err != nil || w.GetLabels()["tier"] != "web" {
		t.Fatalf("Get: %v %v", w, err)
	}
	if size, ok, _ := unstructuredInt(w.Object); !ok || size != 3 {
		t.Fatalf("spec.size %v", size)
	}
	if _, err := l.Get("a", "nope"); !apierrors.IsNotFound(err) {
		t.Fatalf("missing object: %v, want NotFound", err)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("an undeclared resource must fail the call")
		}
	}()
	Objects(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List("", nil)
}

func unstructuredInt(obj map[string]any) (int64, bool, error) {
	spec, _ := obj["spec"].(map[string]any)
	v, ok := spec["size"].(int64)
	return v, ok, nil
}
