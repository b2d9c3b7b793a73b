//go:build !wasip1

package handle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

func newPod(ns, name, uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid),
		ResourceVersion: "rv-" + name}}
}

func newNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{"name": name}}}
}

// labelledPod has n labels, to make its encoding as large as needed.
func labelledPod(uid string, n int) *corev1.Pod {
	p := newPod("default", "big-"+uid, uid)
	p.Labels = map[string]string{}
	for i := range n {
		p.Labels[fmt.Sprintf("label-%04d", i)] = fmt.Sprintf("value-%04d-%030d", i, i)
	}
	return p
}

func TestGetConfig(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{})
	if got := GetConfig(); got != nil {
		t.Fatalf("GetConfig() with no config = %q, want nil", got)
	}

	h.Config = []byte(`{"reverse":true}`)
	if got := GetConfig(); string(got) != `{"reverse":true}` {
		t.Fatalf("GetConfig() = %q", got)
	}

	big := bytes.Repeat([]byte("0123456789"), 700) // 7000 bytes, beyond any scratch buffer
	h.Config = big
	if got := GetConfig(); !bytes.Equal(got, big) {
		t.Fatalf("GetConfig() returned %d bytes, want %d exactly", len(got), len(big))
	}
}

func TestGetWaitingPodNotFound(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{WaitingPods: map[string][]byte{
		"u1": hosttest.PodBytes(t, newPod("ns", "p1", "u1")),
	}})
	if w := GetWaitingPod("nope"); w != nil {
		t.Fatalf("GetWaitingPod(unknown) = %+v, want nil", w.GetPod())
	}
}

func TestGetWaitingPodFound(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{WaitingPods: map[string][]byte{
		"u1": hosttest.PodBytes(t, newPod("ns", "p1", "u1")),
		"u2": hosttest.PodBytes(t, newPod("ns", "p2", "u2")),
	}})
	w := GetWaitingPod("u2")
	if w == nil {
		t.Fatal("GetWaitingPod(u2) = nil")
	}
	if p := w.GetPod(); p.Name != "p2" || p.UID != "u2" || p.Namespace != "ns" {
		t.Fatalf("waiting pod %s/%s uid %s, want ns/p2 u2", p.Namespace, p.Name, p.UID)
	}
}

func TestGetWaitingPodTooSmallRetries(t *testing.T) {
	want := labelledPod("ubig", 60)
	raw := hosttest.PodBytes(t, want)
	if len(raw) <= 2048 {
		t.Fatalf("pod is %d bytes; the test needs > 2048", len(raw))
	}
	hosttest.Install(t, &hosttest.Host{WaitingPods: map[string][]byte{"ubig": raw}})
	w := GetWaitingPod("ubig")
	if w == nil {
		t.Fatal("GetWaitingPod(ubig) = nil")
	}
	if got := w.GetPod(); got.UID != "ubig" || !reflect.DeepEqual(got.Labels, want.Labels) {
		t.Fatalf("decoded uid %q with %d labels, want ubig with %d", got.UID, len(got.Labels), len(want.Labels))
	}
}

func TestGetWaitingPodExactlyFillsBuffer(t *testing.T) {
	// A pod of exactly 2048 bytes fits the first buffer with no room for the terminator.
	var raw []byte
	var want *corev1.Pod
	for pad := 0; pad < 3000 && len(raw) != 2048; pad++ {
		want = newPod("ns", "exact", "uexact")
		want.Annotations = map[string]string{"pad": strings.Repeat("x", pad)}
		raw = hosttest.PodBytes(t, want)
	}
	if len(raw) != 2048 {
		t.Fatalf("could not build a 2048-byte pod")
	}
	hosttest.Install(t, &hosttest.Host{WaitingPods: map[string][]byte{"uexact": raw}})
	w := GetWaitingPod("uexact")
	if w == nil || w.GetPod().Name != "exact" || w.GetPod().Annotations["pad"] != want.Annotations["pad"] {
		t.Fatalf("2048-byte waiting pod not decoded: %+v", w)
	}
}

func TestPodEndStopsAtTerminator(t *testing.T) {
	raw := hosttest.PodBytes(t, newPod("ns", "p1", "u1"))
	trailing := []byte{0x0a, 0x03, 'b', 'a', 'd', 0x12, 0x00} // another valid field after the terminator
	buf := append(append(append([]byte{}, raw...), 0), trailing...)
	if got := podEnd(buf); got != len(raw) {
		t.Fatalf("podEnd = %d, want %d (the terminator)", got, len(raw))
	}
	p := &corev1.Pod{}
	if err := p.Unmarshal(buf[:podEnd(buf)]); err != nil || p.Name != "p1" {
		t.Fatalf("decoding up to podEnd: %v (name %q)", err, p.Name)
	}
	// Without the terminator the bytes that follow would be decoded too (and change the name).
	q := &corev1.Pod{}
	if err := q.Unmarshal(append(append([]byte{}, raw...), trailing[:5]...)); err == nil && q.Name == "p1" {
		t.Fatal("the trailing bytes are not a test: they do not change the decoded pod")
	}
}

func TestPodEndWithoutTerminator(t *testing.T) {
	raw := hosttest.PodBytes(t, newPod("ns", "p1", "u1"))
	if got := podEnd(raw); got != len(raw) {
		t.Fatalf("podEnd of a full buffer = %d, want %d", got, len(raw))
	}
	if got := podEnd([]byte{0x0a, 0x7f, 1, 2}); got != 4 { // length beyond the buffer
		t.Fatalf("podEnd of a truncated field = %d, want the buffer's end", got)
	}
	if got := podEnd([]byte{0x0a}); got != 1 { // tag with no length
		t.Fatalf("podEnd of a bare tag = %d, want 1", got)
	}
	if got := podEnd([]byte{0, 0, 0, 0}); got != 0 {
		t.Fatalf("podEnd of zeros = %d, want 0", got)
	}
}

func TestRejectWaitingPod(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{WaitingPods: map[string][]byte{
		"u1": hosttest.PodBytes(t, newPod("ns", "p1", "u1")),
	}})
	if RejectWaitingPod("nope") {
		t.Fatal("RejectWaitingPod(unknown) = true")
	}
	if len(h.Rejected) != 0 {
		t.Fatalf("rejected %v for an unknown uid", h.Rejected)
	}
	if !RejectWaitingPod("u1") {
		t.Fatal("RejectWaitingPod(u1) = false")
	}
	if !slices.Equal(h.Rejected, []string{"u1"}) {
		t.Fatalf("rejected %v, want [u1]", h.Rejected)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	eventKeys = []string{"Action", "Eventtype", "Note", "Reason", "RegardingReference", "RelatedReference"}
	refKeys   = []string{"APIVersion", "Kind", "Name", "Namespace", "ResourceVersion", "UID"}
)

// decodeEvent checks the ABI's exact keys and returns the event's fields as strings.
func decodeEvent(t *testing.T, raw []byte) (top map[string]string, regarding, related map[string]string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("event %s: %v", raw, err)
	}
	if got := keys(m); !slices.Equal(got, eventKeys) {
		t.Fatalf("event keys %v, want %v", got, eventKeys)
	}
	top = map[string]string{}
	for _, k := range []string{"Eventtype", "Reason", "Action", "Note"} {
		var s string
		if err := json.Unmarshal(m[k], &s); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		top[k] = s
	}
	ref := func(k string) map[string]string {
		var r map[string]string
		if err := json.Unmarshal(m[k], &r); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if got := keys(r); !slices.Equal(got, refKeys) {
			t.Fatalf("%s keys %v, want %v", k, got, refKeys)
		}
		return r
	}
	return top, ref("RegardingReference"), ref("RelatedReference")
}

func TestEventfPodAndNode(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{})
	GetEventRecorder().Eventf(newPod("ns", "p1", "u1"), newNode("n1"), "Normal", "Scheduled", "Binding",
		"scored %d on %s", 42, "n1")
	if len(h.Events) != 1 {
		t.Fatalf("%d events sent, want 1", len(h.Events))
	}
	top, reg, rel := decodeEvent(t, h.Events[0])
	if want := map[string]string{"Eventtype": "Normal", "Reason": "Scheduled", "Action": "Binding",
		"Note": "scored 42 on n1"}; !reflect.DeepEqual(top, want) {
		t.Fatalf("event %v, want %v", top, want)
	}
	if want := map[string]string{"Kind": "Pod", "APIVersion": "v1", "Name": "p1", "Namespace": "ns", "UID": "u1",
		"ResourceVersion": "rv-p1"}; !reflect.DeepEqual(reg, want) {
		t.Fatalf("regarding %v, want %v", reg, want)
	}
	if want := map[string]string{"Kind": "Node", "APIVersion": "v1", "Name": "n1", "Namespace": "", "UID": "uid-n1",
		"ResourceVersion": ""}; !reflect.DeepEqual(rel, want) {
		t.Fatalf("related %v, want %v", rel, want)
	}
}

func TestEventfNilRelatedAndObjectReference(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{})
	ref := &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Name: "c", Namespace: "ns",
		UID: "uc", ResourceVersion: "9"}
	GetEventRecorder().Eventf(ref, nil, "Warning", "R", "A", "plain note")
	_, reg, rel := decodeEvent(t, h.Events[0])
	if want := map[string]string{"Kind": "PersistentVolumeClaim", "APIVersion": "v1", "Name": "c", "Namespace": "ns",
		"UID": "uc", "ResourceVersion": "9"}; !reflect.DeepEqual(reg, want) {
		t.Fatalf("regarding %v, want %v", reg, want)
	}
	for k, v := range rel {
		if v != "" {
			t.Fatalf("nil related has %s = %q, want empty", k, v)
		}
	}
}

func TestEventfTypedNilsAreEmptyReferences(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{})
	GetEventRecorder().Eventf(newPod("ns", "p1", "u1"), (*corev1.Node)(nil), "Normal", "r", "a", "n")
	GetEventRecorder().Eventf((*corev1.ObjectReference)(nil), (*corev1.Pod)(nil), "Normal", "r", "a", "n")
	if len(h.Events) != 2 {
		t.Fatalf("%d events sent, want 2", len(h.Events))
	}
	_, reg, rel := decodeEvent(t, h.Events[0])
	if reg["Name"] != "p1" || rel["Kind"] != "" || rel["Name"] != "" {
		t.Fatalf("regarding %v, related %v", reg, rel)
	}
	_, reg, rel = decodeEvent(t, h.Events[1])
	if reg["Kind"] != "" || rel["Kind"] != "" {
		t.Fatalf("regarding %v, related %v", reg, rel)
	}
}

func TestEventfRejectsOtherTypes(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{})
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "string") {
			t.Fatalf("Eventf with a string regarding: panic %v", r)
		}
		if len(h.Events) != 0 {
			t.Fatalf("an event was sent")
		}
	}()
	GetEventRecorder().Eventf("p1", nil, "Normal", "r", "a", "n")
}

func TestNodeInfosGet(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{Nodes: map[string][]byte{"hg-n1": hosttest.NodeBytes(t, newNode("hg-n1"))}})
	ni, err := NodeInfos().Get("hg-n1")
	if err != nil {
		t.Fatal(err)
	}
	if ni.Name() != "hg-n1" || ni.Node().Labels["name"] != "hg-n1" {
		t.Fatalf("Get(hg-n1) = %q %v", ni.Name(), ni.Node().Labels)
	}
	ni, err = NodeInfos().Get("unknown")
	if err == nil || ni != nil {
		t.Fatalf("Get(unknown) = %v, %v; want nil and an error", ni, err)
	}
	if !strings.Contains(err.Error(), `"unknown"`) {
		t.Fatalf("error %q does not name the node", err)
	}
}

func TestNodeInfosList(t *testing.T) {
	list := &corev1.NodeList{Items: []corev1.Node{*newNode("hl-c"), *newNode("hl-a"), *newNode("hl-b")}}
	raw, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	hosttest.Install(t, &hosttest.Host{NodeList: raw})
	var names []string
	for _, n := range NodeInfos().List() {
		if n.Node() == nil || n.Node().UID != types.UID("uid-"+n.Name()) {
			t.Fatalf("node %q not decoded", n.Name())
		}
		names = append(names, n.Name())
	}
	if want := []string{"hl-c", "hl-a", "hl-b"}; !slices.Equal(names, want) {
		t.Fatalf("List() names %v, want %v", names, want)
	}
}

func TestImageStates(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{
		NodeList: func() []byte {
			b, err := (&corev1.NodeList{Items: []corev1.Node{*newNode("hi-n1")}}).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			return b
		}(),
		Nodes:       map[string][]byte{"hi-n1": hosttest.NodeBytes(t, newNode("hi-n1"))},
		ImageStates: map[string][]byte{"hi-n1": []byte(`{"img":{"Size":10,"NumNodes":2}}`)},
	})
	want := map[string]api.ImageStateSummary{"img": {Size: 10, NumNodes: 2}}
	if got := NodeInfos().List()[0].ImageStates(); !reflect.DeepEqual(got, want) {
		t.Fatalf("listed node's ImageStates() = %v, want %v", got, want)
	}
	ni, err := NodeInfos().Get("hi-n1")
	if err != nil {
		t.Fatal(err)
	}
	if got := ni.ImageStates(); !reflect.DeepEqual(got, want) {
		t.Fatalf("ImageStates() = %v, want %v", got, want)
	}
}

func TestImageStatesUnknownNodeIsNil(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{
		Nodes: map[string][]byte{"hu-n1": hosttest.NodeBytes(t, newNode("hu-n1"))},
	})
	ni, err := NodeInfos().Get("hu-n1")
	if err != nil {
		t.Fatal(err)
	}
	if got := ni.ImageStates(); got != nil { // the fake host answers "null" for a node without entry
		t.Fatalf("ImageStates() for null = %v, want nil", got)
	}
}
