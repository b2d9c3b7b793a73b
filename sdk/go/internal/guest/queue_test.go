//go:build !wasip1

package guest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

type queuePlugin struct {
	preEnqueue func(api.PodInfo) *api.Status
	sortKey    func(api.QueuedPodInfo) api.SortKey
}

func (q *queuePlugin) PreEnqueue(p api.PodInfo) *api.Status    { return q.preEnqueue(p) }
func (q *queuePlugin) SortKey(p api.QueuedPodInfo) api.SortKey { return q.sortKey(p) }

func TestPreEnqueueExport(t *testing.T) {
	pod := newPod("ns", "p1", "u1")
	h := install(t, &hosttest.Host{StatusReason: untouched})
	h.CurrentPod = hosttest.PodBytes(t, pod)
	var seen string
	setPlugin(t, &queuePlugin{preEnqueue: func(p api.PodInfo) *api.Status {
		seen = p.Pod().Name
		if p.Pod().Labels["gate"] == "yes" {
			return api.NewStatus(api.UnschedulableAndUnresolvable, "gated")
		}
		return nil
	}})
	if code := PreEnqueue(); code != 0 || seen != "p1" || h.StatusReason != untouched {
		t.Fatalf("PreEnqueue = %d, saw %q, reason %q", code, seen, h.StatusReason)
	}
	pod.Labels = map[string]string{"gate": "yes"}
	h.CurrentPod = hosttest.PodBytes(t, pod)
	if code := PreEnqueue(); code != int32(api.UnschedulableAndUnresolvable) || h.StatusReason != "gated" {
		t.Fatalf("PreEnqueue = %d, reason %q", code, h.StatusReason)
	}
}

func TestQueueSortExport(t *testing.T) {
	pod := newPod("ns", "p1", "u1")
	ts := time.Unix(1700000000, 123)
	initial := time.Unix(1700000001, 5)
	h := install(t, &hosttest.Host{CurrentPod: hosttest.PodBytes(t, pod),
		QueuedPodInfo: hosttest.QueuedPodInfo(t, ts, nil, 0)})
	var got api.QueuedPodInfo
	setPlugin(t, &queuePlugin{sortKey: func(q api.QueuedPodInfo) api.SortKey {
		got = q
		return api.SortKey{}.Time(q.Timestamp).String(q.Pod().Name)
	}})
	if code := QueueSort(); code != 0 {
		t.Fatalf("QueueSort = %d", code)
	}
	if !got.Timestamp.Equal(ts) || got.InitialAttemptTimestamp != nil || got.Attempts != 0 ||
		got.GetPodInfo().Pod().Name != "p1" {
		t.Fatalf("QueuedPodInfo %+v", got)
	}
	if want := (api.SortKey{}).Time(ts).String("p1"); !bytes.Equal(h.SortKey, want) {
		t.Fatalf("sort key %x, want %x", h.SortKey, want)
	}
	h.QueuedPodInfo = hosttest.QueuedPodInfo(t, ts, &initial, 3)
	QueueSort()
	if got.InitialAttemptTimestamp == nil || !got.InitialAttemptTimestamp.Equal(initial) || got.Attempts != 3 {
		t.Fatalf("QueuedPodInfo %+v", got)
	}
	// An empty key is still sent: it is a key (the smallest).
	setPlugin(t, &queuePlugin{sortKey: func(api.QueuedPodInfo) api.SortKey { return nil }})
	h.SortKey = []byte("old")
	QueueSort()
	if h.SortKey == nil || len(h.SortKey) != 0 {
		t.Fatalf("sort key %q", h.SortKey)
	}
}

func TestQueueSortBadInfoPanics(t *testing.T) {
	install(t, &hosttest.Host{QueuedPodInfo: []byte("{")})
	setPlugin(t, &queuePlugin{sortKey: func(api.QueuedPodInfo) api.SortKey { return nil }})
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "queued_pod_info") {
			t.Fatalf("panic %v", r)
		}
	}()
	QueueSort()
}

func TestQueuePointsRequireTheirPackages(t *testing.T) {
	setLinked(t)
	err := Set(&queuePlugin{})
	if err == nil || !strings.Contains(err.Error(), "exports/preenqueue") || !strings.Contains(err.Error(), "exports/queuesort") {
		t.Fatalf("Set: %v", err)
	}
	setLinked(t, "preenqueue", "queuesort")
	prev := Plugin
	t.Cleanup(func() { register(prev) })
	if err := Set(&queuePlugin{}); err != nil {
		t.Fatal(err)
	}
	if err := Set(filterOnly{}); err == nil || !strings.Contains(err.Error(), "api.QueueSortPlugin") {
		t.Fatalf("Set: %v", err)
	}
}

func TestWaitingPodsAllowReject(t *testing.T) {
	a, b := newPod("ns", "a", "ua"), newPod("ns", "b", "")
	h := install(t, &hosttest.Host{})
	h.Waiting = []hosttest.WaitingPod{hosttest.Waiting(t, a, "Coscheduling", "Other"), hosttest.Waiting(t, b, "Coscheduling")}
	ws := WaitingPods()
	if len(ws) != 2 || ws[0].GetPod().Name != "a" || len(ws[0].GetPendingPlugins()) != 2 || ws[1].GetPod().Name != "b" {
		t.Fatalf("waiting pods %v", ws)
	}
	ws[0].Allow("Coscheduling")
	if p := ws[0].GetPendingPlugins(); len(p) != 1 || p[0] != "Other" {
		t.Fatalf("pending after Allow: %v", p)
	}
	ws[1].Reject("Coscheduling", "no")
	want := []hosttest.WaitingCall{{Op: "allow", UID: "ua", Plugin: "Coscheduling", Found: true},
		{Op: "reject", UID: "ns/b", Plugin: "Coscheduling", Message: "no", Found: true}}
	if len(h.WaitingCalls) != 2 || h.WaitingCalls[0] != want[0] || h.WaitingCalls[1] != want[1] {
		t.Fatalf("calls %+v", h.WaitingCalls)
	}
	if len(h.Waiting) != 1 || h.Waiting[0].Key != "ua" || len(WaitingPods()) != 1 {
		t.Fatalf("host waiting %+v", h.Waiting)
	}
	h.Waiting = nil
	if ws := WaitingPods(); ws != nil {
		t.Fatalf("no waiting pods: %v", ws)
	}
}

func TestListPodsActivateNow(t *testing.T) {
	h := install(t, &hosttest.Host{})
	p1, p2, p3 := newPod("b", "p1", "1"), newPod("a", "p2", "2"), newPod("a", "p0", "3")
	p1.Labels = map[string]string{"g": "x"}
	p2.Labels = map[string]string{"g": "x"}
	hosttest.SetPods(t, h, p1, p2, p3)
	names := func(ps []*corev1.Pod) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.Namespace+"/"+p.Name)
		}
		return strings.Join(s, ",")
	}
	if got := names(ListPods(PodQuery{})); got != "a/p0,a/p2,b/p1" {
		t.Fatalf("all pods %s", got)
	}
	if got := names(ListPods(PodQuery{Namespace: "a", LabelSelector: "g=x"})); got != "a/p2" {
		t.Fatalf("selected pods %s", got)
	}
	Activate(nil)
	if h.Calls["handle.activate"] != 0 {
		t.Fatal("Activate(nil) called the host")
	}
	Activate([]string{"ns/b", "ns/a"})
	if strings.Join(h.Activated, ",") != "ns/a,ns/b" {
		t.Fatalf("activated %v", h.Activated)
	}
	if !Now().Equal(time.Unix(0, 0)) {
		t.Fatalf("zero clock: %v", Now())
	}
	h.Now = time.Unix(1700000000, 42)
	if !Now().Equal(h.Now) {
		t.Fatalf("Now %v", Now())
	}
}
