package api

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewStatusJoinsReasons(t *testing.T) {
	s := NewStatus(Unschedulable, "a", "b", "c")
	if s.Code != Unschedulable || s.Reason != "a, b, c" {
		t.Fatalf("NewStatus = %+v", s)
	}
	if s := NewStatus(Error); s.Reason != "" || s.Code != Error {
		t.Fatalf("NewStatus(Error) = %+v", s)
	}
}

func TestNilStatusIsSuccess(t *testing.T) {
	var s *Status
	if s.GetCode() != Success || s.Message() != "" || !s.IsSuccess() || s.IsSkip() || s.String() != "Success" {
		t.Fatalf("nil status: code %v message %q success %v skip %v string %q", s.GetCode(), s.Message(),
			s.IsSuccess(), s.IsSkip(), s.String())
	}
}

func TestAsStatus(t *testing.T) {
	if AsStatus(nil) != nil {
		t.Fatal("AsStatus(nil) is not nil")
	}
	if s := AsStatus(errors.New("boom")); s.Code != Error || s.Reason != "boom" {
		t.Fatalf("AsStatus = %+v", s)
	}
}

func TestCodeValuesAndNames(t *testing.T) {
	want := map[Code]string{0: "Success", 1: "Error", 2: "Unschedulable", 3: "UnschedulableAndUnresolvable", 4: "Wait",
		5: "Skip", 6: "Pending", 7: "Code(7)", -1: "Code(-1)"}
	for c, name := range want {
		if c.String() != name {
			t.Errorf("Code(%d).String() = %q, want %q", int32(c), c.String(), name)
		}
	}
	if Pending != 6 || Skip != 5 || Wait != 4 {
		t.Fatalf("codes Wait %d Skip %d Pending %d", Wait, Skip, Pending)
	}
	if s := NewStatus(Skip, "x"); !s.IsSkip() || s.IsSuccess() || s.String() != "Skip: x" {
		t.Fatalf("Skip status: %v", s)
	}
}

func TestEventNumbering(t *testing.T) {
	gvks := []GVK{Pod, Node, PersistentVolume, PersistentVolumeClaim, PodSchedulingContext, ResourceClaim, StorageClass,
		CSINode, CSIDriver, CSIStorageCapacity, WildCard}
	for i, g := range gvks {
		if int(g) != i {
			t.Fatalf("GVK #%d = %d", i, g)
		}
	}
	if Add != 1 || Delete != 2 || UpdateNodeAllocatable != 4 || UpdateNodeCondition != 32 || Update != 60 || All != 63 {
		t.Fatalf("actions Add %d Delete %d Update %d All %d", Add, Delete, Update, All)
	}
}

func TestNodeToStatusDefault(t *testing.T) {
	m := NodeToStatus{"n1": Unschedulable}
	if m.Get("n1") != Unschedulable || m.Get("n2") != UnschedulableAndUnresolvable {
		t.Fatalf("Get n1 %v n2 %v", m.Get("n1"), m.Get("n2"))
	}
	if ModeNoop != 0 || ModeOverride != 1 {
		t.Fatalf("modes %d %d", ModeNoop, ModeOverride)
	}
}

func TestCycleState(t *testing.T) {
	s := NewCycleState()
	if _, ok := s.Read("k"); ok {
		t.Fatal("new state has k")
	}
	s.Write("k", 1)
	if v, ok := s.Read("k"); !ok || v != 1 {
		t.Fatalf("Read = %v, %v", v, ok)
	}
	s.Delete("k")
	if _, ok := s.Read("k"); ok {
		t.Fatal("k survived Delete")
	}
	if _, ok := NewCycleState().Read("k"); ok {
		t.Fatal("states share storage")
	}
}

// TestCycleStateAgainstAMap drives the state and a map with the same writes, overwrites and deletes,
// below and past the size where the state moves its keys from a slice to a map.
func TestCycleStateAgainstAMap(t *testing.T) {
	s, want := NewCycleState(), map[string]any{}
	check := func(step string) {
		t.Helper()
		for i := 0; i < 3*smallState; i++ {
			k := fmt.Sprint("k", i)
			v, ok := s.Read(k)
			w, wok := want[k]
			if ok != wok || v != w {
				t.Fatalf("%s: Read(%q) = %v, %v; want %v, %v", step, k, v, ok, w, wok)
			}
		}
	}
	for i := 0; i < 3*smallState; i++ {
		k := fmt.Sprint("k", i)
		s.Write(k, i)
		want[k] = i
		if i%3 == 0 {
			s.Write(k, -i) // an overwrite keeps one entry
			want[k] = -i
		}
		if i%4 == 1 {
			s.Delete(fmt.Sprint("k", i-1))
			delete(want, fmt.Sprint("k", i-1))
		}
		check(fmt.Sprint("after key ", i))
	}
}

func TestTestValues(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	if PodOf(p).Pod() != p {
		t.Fatal("PodOf does not return the pod")
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	images := map[string]ImageStateSummary{"i": {Size: 1, NumNodes: 1}}
	ni := NodeInfoOf(n, images)
	if ni.Name() != "n" || ni.Node() != n || ni.ImageStates()["i"].Size != 1 {
		t.Fatalf("NodeInfoOf: %q %v %v", ni.Name(), ni.Node(), ni.ImageStates())
	}
	if NodeInfoOf(nil, nil).Name() != "" {
		t.Fatal("NodeInfoOf(nil) has a name")
	}
}

type cloneCounter struct{ n int }

func (c *cloneCounter) Clone() StateData { return &cloneCounter{c.n} }

// Clone follows kube's CycleState.Clone: StateData is cloned, anything else shared, in both the
// slice and the map form of the state.
func TestCycleStateClone(t *testing.T) {
	for _, keys := range []int{1, smallState + 5} {
		s := NewCycleState()
		shared := &[]int{1}
		s.Write("c", &cloneCounter{1})
		s.Write("shared", shared)
		for i := range keys {
			s.Write(string(rune('a'+i%26))+string(rune('A'+i/26)), i)
		}
		c := s.Clone()
		v, _ := c.Read("c")
		v.(*cloneCounter).n = 5
		orig, _ := s.Read("c")
		if orig.(*cloneCounter).n != 1 {
			t.Fatalf("%d keys: changing the clone's StateData changed the original", keys)
		}
		if v, _ := c.Read("shared"); v.(*[]int) != shared {
			t.Fatalf("%d keys: a non-StateData value was not shared", keys)
		}
		c.Write("new", 1)
		if _, ok := s.Read("new"); ok {
			t.Fatalf("%d keys: writing the clone wrote the original", keys)
		}
	}
}
