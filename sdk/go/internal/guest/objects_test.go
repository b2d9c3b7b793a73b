//go:build !wasip1

package guest

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

// scorePod runs one score call and returns the pod the plugin saw.
func scorePod(t *testing.T) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	setPlugin(t, &fakePlugin{score: func(_ api.CycleState, p api.PodInfo, _ api.NodeInfo) (int64, *api.Status) {
		got = p.Pod()
		return 0, nil
	}})
	Score()
	return got
}

func TestPodDecodedOnceForEqualBytes(t *testing.T) {
	h := install(t, &hosttest.Host{CurrentNodeName: "n1"})
	h.CurrentPod = hosttest.PodBytes(t, newPod("ns", "p1", "u1"))

	first := scorePod(t)
	if first == nil || first.Name != "p1" || first.UID != "u1" {
		t.Fatalf("first call decoded %+v, want pod p1/u1", first)
	}
	// A new slice with equal bytes, as the host sends in the next call of the same cycle.
	h.CurrentPod = append([]byte(nil), h.CurrentPod...)
	if second := scorePod(t); second != first {
		t.Fatalf("equal bytes were decoded again: %p != %p", second, first)
	}

	h.CurrentPod = hosttest.PodBytes(t, newPod("ns", "p2", "u2"))
	third := scorePod(t)
	if third == first {
		t.Fatal("changed bytes returned the cached pod")
	}
	if third.Name != "p2" || third.UID != "u2" {
		t.Fatalf("changed bytes decoded %s/%s, want p2/u2", third.Name, third.UID)
	}
	if first.Name != "p1" {
		t.Fatalf("re-decoding modified the earlier pod: its name is now %q", first.Name)
	}
}

func TestPodFetchedOncePerCall(t *testing.T) {
	h := install(t, &hosttest.Host{CurrentPod: hosttest.PodBytes(t, newPod("ns", "p1", "u1"))})
	setPlugin(t, &fakePlugin{filter: func(_ api.CycleState, p api.PodInfo, _ api.NodeInfo) *api.Status {
		a, b := p.Pod(), p.Pod()
		if a != b {
			t.Errorf("Pod() returned different pointers within a call")
		}
		return nil
	}})
	Filter()
	if n := h.Calls["currentPod"]; n != 1 {
		t.Fatalf("currentPod asked %d times in one call, want 1", n)
	}
}

func TestBigPodFetchedWithRetry(t *testing.T) {
	want := bigPod("big")
	raw := hosttest.PodBytes(t, want)
	if len(raw) <= 2048 {
		t.Fatalf("test pod is %d bytes, must exceed the scratch buffer", len(raw))
	}
	h := install(t, &hosttest.Host{CurrentPod: raw})
	got := scorePod(t)
	if n := h.Calls["currentPod"]; n != 2 {
		t.Fatalf("currentPod asked %d times, want 2 (scratch, then the full size)", n)
	}
	if got.Name != "big" || !reflect.DeepEqual(got.Labels, want.Labels) {
		t.Fatalf("decoded pod %q with %d labels, want %q with %d", got.Name, len(got.Labels), "big", len(want.Labels))
	}
}

func TestScoreWithoutPodMakesNoPodCall(t *testing.T) {
	h := install(t, &hosttest.Host{
		CurrentPod:      hosttest.PodBytes(t, newPod("ns", "p1", "u1")),
		CurrentNodeName: "n1",
		Nodes:           map[string][]byte{"n1": hosttest.NodeBytes(t, newNode("n1"))},
	})
	var name string
	setPlugin(t, &fakePlugin{score: func(_ api.CycleState, _ api.PodInfo, n api.NodeInfo) (int64, *api.Status) {
		name = n.Name()
		return 1, nil
	}})
	Score()
	if name != "n1" {
		t.Fatalf("NodeInfo.Name() = %q, want n1", name)
	}
	if n := h.Calls["currentPod"]; n != 0 {
		t.Fatalf("currentPod asked %d times by a Score that never calls Pod(), want 0", n)
	}
	if n := h.Calls["node"]; n != 0 {
		t.Fatalf("node asked %d times by a Score that never calls Node(), want 0", n)
	}
	if n := h.Calls["nodeImageStates"]; n != 0 {
		t.Fatalf("nodeImageStates asked %d times, want 0", n)
	}
}

func TestMissingPodIsNil(t *testing.T) {
	install(t, &hosttest.Host{})
	if p := scorePod(t); p != nil {
		t.Fatalf("Pod() with no currentPod = %+v, want nil", p)
	}
}

func TestNodeInfoNodeAndImages(t *testing.T) {
	h := install(t, &hosttest.Host{
		Nodes:       map[string][]byte{"n1": hosttest.NodeBytes(t, newNode("n1"))},
		ImageStates: map[string][]byte{"n1": []byte(`{"img":{"Size":10,"NumNodes":2},"b":{"Size":7,"NumNodes":1}}`)},
	})
	ni := NewNodeInfo("n1")
	n := ni.Node()
	if n == nil || n.Name != "n1" || n.Labels["name"] != "n1" {
		t.Fatalf("Node() = %+v, want node n1", n)
	}
	if ni.Node() != n || h.Calls["node"] != 1 {
		t.Fatalf("second Node() asked the host again (node calls %d)", h.Calls["node"])
	}
	want := map[string]api.ImageStateSummary{"img": {Size: 10, NumNodes: 2}, "b": {Size: 7, NumNodes: 1}}
	if got := ni.ImageStates(); !reflect.DeepEqual(got, want) {
		t.Fatalf("ImageStates() = %v, want %v", got, want)
	}
	ni.ImageStates()
	if c := h.Calls["nodeImageStates"]; c != 1 {
		t.Fatalf("nodeImageStates asked %d times, want 1", c)
	}

	unknown := NewNodeInfo("nope")
	if unknown.Node() != nil {
		t.Fatal("Node() of an unknown node is not nil")
	}
	if unknown.ImageStates() != nil {
		t.Fatal(`ImageStates() for "null" is not nil`)
	}
	if unknown.Name() != "nope" {
		t.Fatalf("Name() = %q, want nope", unknown.Name())
	}
}

func TestNodeDecodedOncePerName(t *testing.T) {
	h := install(t, &hosttest.Host{Nodes: map[string][]byte{
		"n1": hosttest.NodeBytes(t, newNode("n1")),
		"n2": hosttest.NodeBytes(t, newNode("n2")),
	}})
	a1, a2 := NewNodeInfo("n1").Node(), NewNodeInfo("n1").Node()
	if a1 != a2 {
		t.Fatal("equal node bytes decoded twice")
	}
	if b := NewNodeInfo("n2").Node(); b == a1 || b.Name != "n2" {
		t.Fatalf("node n2 = %q (same pointer as n1: %v)", b.Name, b == a1)
	}
	changed := newNode("n1")
	changed.Labels["zone"] = "z"
	h.Nodes["n1"] = hosttest.NodeBytes(t, changed)
	if a3 := NewNodeInfo("n1").Node(); a3 == a1 || a3.Labels["zone"] != "z" {
		t.Fatalf("changed node bytes not re-decoded: labels %v", a3.Labels)
	}
}

func TestListNodeInfosInHostOrder(t *testing.T) {
	list := &corev1.NodeList{Items: []corev1.Node{*newNode("n3"), *newNode("n1"), *newNode("n2")}}
	raw, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	h := install(t, &hosttest.Host{NodeList: raw})
	nodes := ListNodeInfos()
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name())
		if n.Node() == nil || n.Node().Name != n.Name() {
			t.Fatalf("node %q not decoded from the list", n.Name())
		}
	}
	if want := []string{"n3", "n1", "n2"}; !slices.Equal(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	if c := h.Calls["node"]; c != 0 {
		t.Fatalf("listed nodes asked node() %d times, want 0", c)
	}

	install(t, &hosttest.Host{})
	if got := ListNodeInfos(); len(got) != 0 {
		t.Fatalf("empty snapshot listed %d nodes", len(got))
	}
}

func TestUndecodablePodPanics(t *testing.T) {
	install(t, &hosttest.Host{CurrentPod: []byte{0x0a, 0x7f}}) // field 1, length 127, nothing follows
	setPlugin(t, &fakePlugin{})
	msg := mustPanic(t, func() { newCurrentPod().Pod() })
	if want := "decoding Pod"; !strings.Contains(msg, want) {
		t.Fatalf("panic %q does not contain %q", msg, want)
	}
}

func TestImageStatesDecodedOncePerChange(t *testing.T) {
	h := install(t, &hosttest.Host{ImageStates: map[string][]byte{
		"n1": []byte(`{"img":{"Size":10,"NumNodes":2}}`),
	}})
	a1, a2 := NewNodeInfo("n1").ImageStates(), NewNodeInfo("n1").ImageStates()
	if reflect.ValueOf(a1).UnsafePointer() != reflect.ValueOf(a2).UnsafePointer() {
		t.Fatal("equal image state bytes decoded twice")
	}
	h.ImageStates["n1"] = []byte(`{"img":{"Size":10,"NumNodes":3}}`)
	if a3 := NewNodeInfo("n1").ImageStates(); a3["img"].NumNodes != 3 {
		t.Fatalf("changed image states not re-decoded: %v", a3)
	}
}
