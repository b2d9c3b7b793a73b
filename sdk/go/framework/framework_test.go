//go:build !wasip1

package framework

import (
	"encoding/json"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
	"github.com/wasmsched/wasmsched/sdk/go/internal/guest"
)

type hinted struct {
	got []any // pod, old, new of the last hint
}

func (h *hinted) EventsToRegister() ([]ClusterEventWithHint, error) {
	return []ClusterEventWithHint{
		{Event: ClusterEvent{Resource: AssignedPod, ActionType: Add | UpdatePodLabel | Delete}, QueueingHintFn: h.pod},
		{Event: ClusterEvent{Resource: Node, ActionType: Add | UpdateNodeLabel}, QueueingHintFn: h.node},
		{Event: ClusterEvent{Resource: WatchedResource("example.com", "v1", "widgets"), ActionType: All},
			QueueingHintFn: h.widget},
		{Event: ClusterEvent{Resource: PersistentVolume, ActionType: Update}},
	}, nil
}

func (h *hinted) pod(pod *corev1.Pod, oldObj, newObj any) (QueueingHint, error) {
	h.got = []any{pod, oldObj, newObj}
	if newObj != nil && newObj.(*corev1.Pod).Name == "queue-me" {
		return Queue, nil
	}
	return QueueSkip, nil
}

func (h *hinted) node(pod *corev1.Pod, oldObj, newObj any) (QueueingHint, error) {
	h.got = []any{pod, oldObj, newObj}
	return QueueSkip, errors.New("node hint failed")
}

func (h *hinted) widget(pod *corev1.Pod, oldObj, newObj any) (QueueingHint, error) {
	h.got = []any{pod, oldObj, newObj}
	if newObj.(*unstructured.Unstructured).GetName() == "w1" {
		return Queue, nil
	}
	return QueueSkip, nil
}

func setup(t *testing.T, h *hosttest.Host) *hinted {
	t.Helper()
	hosttest.Install(t, h)
	p := &hinted{}
	guest.Link("enqueue")
	if err := guest.Set(p); err != nil {
		t.Fatal(err)
	}
	registered = nil
	t.Cleanup(func() { registered = nil })
	return p
}

func podBytes(t *testing.T, name, node string) []byte {
	return hosttest.PodBytes(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PodSpec{NodeName: node}})
}

func TestEnqueueSendsEventsWithHints(t *testing.T) {
	h := &hosttest.Host{}
	setup(t, h)
	guest.Enqueue()
	if h.ClusterEvents != nil {
		t.Fatalf("a v2 plugin sent v1 events: % x", h.ClusterEvents)
	}
	var got []map[string]any
	if err := json.Unmarshal(h.ClusterEventsWithHints, &got); err != nil {
		t.Fatal(err)
	}
	want := `[{"resource":"AssignedPod","action":515,"hint":true},{"resource":"Node","action":9,"hint":true},` +
		`{"resource":"widgets.v1.example.com","action":32767,"hint":true},{"resource":"PersistentVolume","action":32764,"hint":false}]`
	if string(h.ClusterEventsWithHints) != want {
		t.Fatalf("sent %s\nwant %s", h.ClusterEventsWithHints, want)
	}
}

func TestQueueingHint(t *testing.T) {
	h := &hosttest.Host{CurrentPod: podBytes(t, "me", ""), StatusReason: "<none>"}
	p := setup(t, h)

	// Pod add: no old object (untyped nil), the new one decoded from protobuf.
	h.QueueingHintEvent, h.NewObject = hosttest.U32(0), podBytes(t, "queue-me", "n1")
	if got := guest.QueueingHint(); got != 1 {
		t.Fatalf("pod add hint %d, want 1 (Queue)", got)
	}
	if p.got[0].(*corev1.Pod).Name != "me" || p.got[1] != nil || p.got[2].(*corev1.Pod).Spec.NodeName != "n1" {
		t.Fatalf("hint got %#v", p.got)
	}
	h.NewObject = podBytes(t, "other", "n1")
	if got := guest.QueueingHint(); got != 0 {
		t.Fatalf("pod hint %d, want 0 (QueueSkip)", got)
	}

	// An error is 2 with the error's text as the reason.
	h.QueueingHintEvent = hosttest.U32(1)
	h.OldObject = hosttest.NodeBytes(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	if got := guest.QueueingHint(); got != 2 || h.StatusReason != "node hint failed" {
		t.Fatalf("failing hint: %d, reason %q", got, h.StatusReason)
	}
	if p.got[1].(*corev1.Node).Name != "n1" {
		t.Fatalf("old node %#v", p.got[1])
	}

	// Any other kind is JSON, decoded to unstructured.
	h.QueueingHintEvent, h.OldObject = hosttest.U32(2), nil
	h.NewObject = []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"n":3}}`)
	if got := guest.QueueingHint(); got != 1 {
		t.Fatalf("widget hint %d", got)
	}
	u := p.got[2].(*unstructured.Unstructured)
	if n, ok, _ := unstructured.NestedInt64(u.Object, "spec", "n"); !ok || n != 3 {
		t.Fatalf("spec.n = %v, %v (integers must decode as int64)", n, ok)
	}

	// An event without a hint queues; an index past the list is an error.
	h.QueueingHintEvent = hosttest.U32(3)
	if got := guest.QueueingHint(); got != 1 {
		t.Fatalf("event without a hint %d", got)
	}
	h.QueueingHintEvent = hosttest.U32(9)
	if got := guest.QueueingHint(); got != 2 {
		t.Fatalf("unknown event %d", got)
	}
}

func TestActionValuesAreKubes(t *testing.T) {
	// docs/abi.md §7's right-hand column.
	if Update != 32764 || All != 32767 || UpdatePodLabel != 512 || UpdatePodGeneratedResourceClaim != 16384 {
		t.Fatalf("Update %d All %d UpdatePodLabel %d UpdatePodGeneratedResourceClaim %d", Update, All,
			UpdatePodLabel, UpdatePodGeneratedResourceClaim)
	}
}
