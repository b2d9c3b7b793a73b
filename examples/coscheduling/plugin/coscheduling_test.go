//go:build !wasip1

package coscheduling

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/framework"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

// Ported from pkg/coscheduling/coscheduling_test.go of kubernetes-sigs/scheduler-plugins at 903da7df.

func TestLess(t *testing.T) {
	lowPriority, highPriority := int32(10), int32(100)
	now := time.Now().Truncate(time.Second) // a PodGroup's creationTimestamp has seconds
	type q struct {
		ns, name, pg string
		prio         int32
		iat          *time.Time
	}
	tests := []struct {
		name   string
		p1, p2 q
		pgs    []*PodGroup
		want   bool
	}{
		{"p1.priority less than p2.priority", q{"ns1", "p1", "", lowPriority, nil}, q{"ns2", "p2", "", highPriority, nil}, nil, false},
		{"p1.priority greater than p2.priority", q{"ns1", "p1", "", highPriority, nil}, q{"ns2", "p2", "", lowPriority, nil}, nil, true},
		{"equal priority. p1 is added to schedulingQ earlier than p2",
			q{"ns1", "p1", "", highPriority, ptrTime(now.Add(time.Second))}, q{"ns2", "p2", "", highPriority, ptrTime(now.Add(2 * time.Second))}, nil, true},
		{"equal priority. p2 is added to schedulingQ earlier than p1",
			q{"ns1", "p1", "", highPriority, ptrTime(now.Add(2 * time.Second))}, q{"ns2", "p2", "", highPriority, ptrTime(now.Add(time.Second))}, nil, false},
		{"p1.priority less than p2.priority, p1 belongs to pg1",
			q{"ns1", "p1", "pg1", lowPriority, nil}, q{"ns2", "p2", "", highPriority, nil},
			[]*PodGroup{makePG("ns1", "pg1", 0).Obj()}, false},
		{"p1.priority greater than p2.priority, p1 belongs to pg1",
			q{"ns1", "p1", "pg1", highPriority, nil}, q{"ns2", "p2", "", lowPriority, nil},
			[]*PodGroup{makePG("ns1", "pg1", 0).Obj()}, true},
		{"equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
			q{"ns1", "p1", "pg1", highPriority, ptrTime(now.Add(time.Second))}, q{"ns2", "p2", "", highPriority, ptrTime(now.Add(2 * time.Second))},
			[]*PodGroup{makePG("ns1", "pg1", 0).Time(now.Add(time.Second)).Obj()}, true},
		{"equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
			q{"ns1", "p1", "pg1", highPriority, ptrTime(now.Add(2 * time.Second))}, q{"ns2", "p2", "", highPriority, ptrTime(now.Add(time.Second))},
			[]*PodGroup{makePG("ns1", "pg1", 0).Time(now.Add(2 * time.Second)).Obj()}, false},
		{"p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
			q{"ns1", "p1", "pg1", lowPriority, nil}, q{"ns2", "p2", "pg2", highPriority, nil},
			[]*PodGroup{makePG("ns1", "pg1", 0).Time(now.Add(time.Second)).Obj(), makePG("ns2", "pg2", 0).Time(now.Add(2 * time.Second)).Obj()}, false},
		{"p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
			q{"ns1", "p1", "pg1", highPriority, nil}, q{"ns2", "p2", "pg1", lowPriority, nil},
			[]*PodGroup{makePG("ns1", "pg1", 0).Time(now.Add(time.Second)).Obj(), makePG("ns2", "pg2", 0).Time(now.Add(2 * time.Second)).Obj()}, true},
		{"equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 belongs to pg2",
			q{"ns1", "p1", "pg1", highPriority, ptrTime(now.Add(time.Second))}, q{"ns2", "p2", "pg2", highPriority, ptrTime(now.Add(2 * time.Second))},
			[]*PodGroup{makePG("ns1", "pg1", 0).Time(now.Add(time.Second)).Obj(), makePG("ns2", "pg2", 0).Time(now.Add(2 * time.Second)).Obj()}, true},
		{"equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 belongs to pg1",
			q{"ns", "p1", "pg2", lowPriority, ptrTime(now.Add(time.Second))}, q{"ns", "p2", "pg1", highPriority, ptrTime(now.Add(2 * time.Second))},
			[]*PodGroup{makePG("ns", "pg1", 0).Time(now.Add(time.Second)).Obj(), makePG("ns", "pg2", 0).Time(now.Add(2 * time.Second)).Obj()}, false},
		{"equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
			q{"ns1", "p1", "pg2", highPriority, ptrTime(now.Add(time.Second))}, q{"ns2", "p2", "pg2", highPriority, ptrTime(now.Add(time.Second))},
			[]*PodGroup{makePG("ns1", "pg1", 0).Time(now.Add(time.Second)).Obj(), makePG("ns2", "pg2", 0).Time(now.Add(2 * time.Second)).Obj()}, true},
		{"equal priority and creation time, and p2 belong to pg2",
			q{"ns1", "p1", "", highPriority, ptrTime(now.Add(time.Second))}, q{"ns2", "p2", "pg2", highPriority, ptrTime(now.Add(time.Second))},
			[]*PodGroup{makePG("ns2", "pg2", 0).Time(now.Add(2 * time.Second)).Obj()}, true},
	}
	mk := func(x q) api.QueuedPodInfo {
		b := makePod(x.ns, x.name).Priority(x.prio)
		if x.pg != "" {
			b.Group(x.pg)
		}
		return qpi(b.Obj(), x.iat)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, tt.pgs, nil)
			pl := c.plugin(t, "")
			if got := pl.Less(mk(tt.p1), mk(tt.p2)); got != tt.want {
				t.Errorf("Want %v, got %v", tt.want, got)
			}
		})
	}
}

func TestLessAfterScheduleFailure(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	pg1 := makePG("ns", "pg1", 3).Time(now.Add(-10 * time.Second)).Obj()
	pg2 := makePG("ns", "pg2", 3).Time(now.Add(-5 * time.Second)).Obj()
	p1 := qpi(makePod("ns", "p1").Priority(100).Group("pg1").Obj(), ptrTime(now))
	p2 := qpi(makePod("ns", "p2").Priority(100).Group("pg2").Obj(), ptrTime(now))
	c := newCluster(t, []*PodGroup{pg1, pg2}, nil)
	c.h.Now = now
	pl := c.plugin(t, "")
	if !pl.Less(p1, p2) {
		t.Error("Before failure: expected Less(p1, p2) = true, got false")
	}
	pl.pgMgr.MarkPodGroupScheduleFailure("ns/pg1")
	if pl.Less(p1, p2) || !pl.Less(p2, p1) {
		t.Error("After failure: expected pg2 before pg1")
	}
	pl.pgMgr.ClearPodGroupScheduleFailure("ns/pg1")
	if !pl.Less(p1, p2) {
		t.Error("After clear: expected Less(p1, p2) = true, got false")
	}
}

// A pod never popped has no InitialAttemptTimestamp: its Timestamp is used (upstream dereferences nil).
func TestSortKeyWithoutInitialAttempt(t *testing.T) {
	newCluster(t, nil, nil)
	pl, _ := NewWithClock(nil, time.Now)
	a := api.QueuedPodInfo{PodInfo: api.PodOf(makePod("ns", "b").Obj()), Timestamp: time.Unix(100, 0)}
	b := api.QueuedPodInfo{PodInfo: api.PodOf(makePod("ns", "a").Obj()), Timestamp: time.Unix(200, 0)}
	if !pl.Less(a, b) || pl.Less(b, a) {
		t.Fatal("the earlier Timestamp does not sort first")
	}
}

func TestPodGroupBackoffTime(t *testing.T) {
	pods := []*corev1.Pod{
		makePod("ns", "pod1").UID("pod1").Group("pg1").Obj(),
		makePod("ns", "pod2").UID("pod2").Group("pg1").Obj(),
		makePod("ns", "pod3").UID("pod3").Group("pg1").Obj(),
	}
	c := newCluster(t, []*PodGroup{makePG("ns", "pg1", 3).Obj()}, pods, makeNode("node", "4"))
	pl := c.plugin(t, `{"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 1}`)
	state := api.NewCycleState()
	code, _ := pl.Permit(state, api.PodOf(pods[0]), "test")
	if code.GetCode() != api.Wait {
		t.Fatalf("expected %v, got %v", api.Wait, code.GetCode())
	}
	got := append([]string{}, c.h.Activated...)
	sort.Strings(got)
	if strings.Join(got, ",") != "ns/pod2,ns/pod3" {
		t.Fatalf("activated %v, want ns/pod2, ns/pod3", got)
	}
	pl.PostFilter(api.NewCycleState(), api.PodOf(pods[1]), nil)
	_, s := pl.PreFilter(api.NewCycleState(), api.PodOf(pods[2]))
	if s.GetCode() != api.UnschedulableAndUnresolvable || s.Message() != "podGroup ns/pg1 failed recently" {
		t.Fatalf("PreFilter: %v", s)
	}
	// The backoff ends on the scheduler's clock (go-cache: expired once now > expiry).
	c.h.Now = c.h.Now.Add(1*time.Second + time.Nanosecond)
	if _, s := pl.PreFilter(api.NewCycleState(), api.PodOf(pods[2])); !s.IsSuccess() {
		t.Fatalf("PreFilter after the backoff: %v", s)
	}
}

func TestPermit(t *testing.T) {
	pgs := []*PodGroup{makePG("ns", "pg1", 1).Obj(), makePG("ns", "pg2", 2).Obj()}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want api.Code
	}{
		{"pods do not belong to any podGroup", makePod("ns", "p").UID("p").Obj(), api.Success},
		{"pods belong to a pg1, but quorum not satisfied", makePod("ns", "p").UID("p").Group("pg2").Obj(), api.Wait},
		{"pods belong to a podGroup, and quorum satisfied", makePod("ns", "p").UID("p").Group("pg1").Obj(), api.Success},
		{"pod specifies a non-existent pg", makePod("ns", "p").UID("p").Group("nope").Obj(), api.Unschedulable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, pgs, []*corev1.Pod{tt.pod}, makeNode("node", "4"))
			pl := c.plugin(t, `{"permitWaitingTimeSeconds": 10}`)
			code, wait := pl.Permit(api.NewCycleState(), api.PodOf(tt.pod), "node")
			if got := code.GetCode(); got != tt.want {
				t.Errorf("Want %v, but got %v", tt.want, got)
			}
			if tt.want == api.Wait && wait != 10*time.Second {
				t.Errorf("wait %v, want permitWaitingTimeSeconds", wait)
			}
		})
	}
}

func TestPermitWaitsTheGroupsTimeoutAndAllowsTheGang(t *testing.T) {
	p1 := makePod("ns", "p1").UID("u1").Group("pg").Obj()
	p2 := makePod("ns", "p2").UID("u2").Group("pg").Obj()
	other := makePod("ns", "x").UID("ux").Group("other").Obj()
	c := newCluster(t, []*PodGroup{makePG("ns", "pg", 2).Timeout(30).Obj(), makePG("ns", "other", 2).Obj()},
		[]*corev1.Pod{p1, p2, other})
	pl := c.plugin(t, "")
	s, wait := pl.Permit(api.NewCycleState(), api.PodOf(p1), "n")
	if s.GetCode() != api.Wait || wait != 30*time.Second {
		t.Fatalf("first pod: %v %v", s, wait)
	}
	pl.pgMgr.MarkPodGroupScheduleFailure("ns/pg")
	c.h.Waiting = []hosttest.WaitingPod{hosttest.Waiting(t, p1, Name), hosttest.Waiting(t, other, Name)}
	s, wait = pl.Permit(api.NewCycleState(), api.PodOf(p2), "n")
	if !s.IsSuccess() || wait != 0 {
		t.Fatalf("second pod: %v %v", s, wait)
	}
	if len(c.h.WaitingCalls) != 1 || c.h.WaitingCalls[0] != (hosttest.WaitingCall{Op: "allow", UID: "u1", Plugin: Name, Found: true}) {
		t.Fatalf("waiting calls %+v", c.h.WaitingCalls)
	}
	if _, failed := pl.pgMgr.lastFailedSchedulePG["ns/pg"]; failed {
		t.Fatal("Success did not clear the group's failure")
	}
}

func TestPostFilter(t *testing.T) {
	tests := []struct {
		name         string
		pod          *corev1.Pod
		existingPods []*corev1.Pod
		pgs          []*PodGroup
		want         *api.Status
	}{
		{"pod does not belong to any pod group", makePod("ns", "p").UID("p").Obj(), nil,
			[]*PodGroup{makePG("ns", "pg1", 2).Obj()}, api.NewStatus(api.Unschedulable, "can not find pod group")},
		{"enough pods assigned, do not reject all", makePod("ns", "p").UID("p").Group("pg1").Obj(),
			[]*corev1.Pod{makePod("ns", "p1").UID("p1").Node("node").Group("pg1").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 1).Obj()}, api.NewStatus(api.Unschedulable)},
		{"pod failed at filter phase, reject all pods", makePod("ns", "p").UID("p").Group("pg1").Obj(),
			[]*corev1.Pod{makePod("ns", "p1").UID("p1").Node("node").Group("pg1").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 2).Obj()},
			api.NewStatus(api.Unschedulable, "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, tt.pgs, append(tt.existingPods, tt.pod), makeNode("node", "4"))
			pl := c.plugin(t, `{"permitWaitingTimeSeconds": 10}`)
			_, _, got := pl.PostFilter(api.NewCycleState(), api.PodOf(tt.pod), api.NodeToStatus{"node": api.Success})
			if *got != *tt.want {
				t.Errorf("Want %v, but got %v", tt.want, got)
			}
		})
	}
}

func TestPostFilterRejectsTheWaitingGang(t *testing.T) {
	p := makePod("ns", "p").UID("p").Group("pg1").Obj()
	w1 := makePod("ns", "w1").UID("w1").Group("pg1").Obj()
	w2 := makePod("other", "w2").UID("w2").Group("pg1").Obj() // another namespace: another group
	c := newCluster(t, []*PodGroup{makePG("ns", "pg1", 3).Obj()}, []*corev1.Pod{p, w1, w2})
	pl := c.plugin(t, "")
	pl.pgMgr.Permit(api.NewCycleState(), w1)
	pl.pgMgr.permittedPG.Add("ns/pg1", time.Minute)
	c.h.Waiting = []hosttest.WaitingPod{hosttest.Waiting(t, w1, Name), hosttest.Waiting(t, w2, Name)}
	_, _, s := pl.PostFilter(api.NewCycleState(), api.PodOf(p), nil)
	if s.GetCode() != api.Unschedulable || len(c.h.WaitingCalls) != 1 ||
		c.h.WaitingCalls[0] != (hosttest.WaitingCall{Op: "reject", UID: "w1", Plugin: Name,
			Message: "optimistic rejection in PostFilter", Found: true}) {
		t.Fatalf("%v; calls %+v", s, c.h.WaitingCalls)
	}
	if pl.pgMgr.permittedPG.Get("ns/pg1") {
		t.Error("the group is still permitted")
	}
	if got := pl.pgMgr.lastFailedSchedulePG["ns/pg1"]; !got.Equal(c.h.Now) {
		t.Errorf("failure time %v, want the scheduler's clock %v", got, c.h.Now)
	}
}

func TestPostFilterRejectThreshold(t *testing.T) {
	reject := api.NewStatus(api.Unschedulable, "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter")
	noReject := api.NewStatus(api.Unschedulable)
	tests := []struct {
		name          string
		threshold     int
		minMember     int32
		assignedCount int
		want          *api.Status
	}{
		{"default 10%: 9/10 assigned (10% gap) → no rejection", 10, 10, 9, noReject},
		{"default 10%: 8/10 assigned (20% gap) → rejection", 10, 10, 8, reject},
		{"0%: 9/10 assigned (10% gap) → rejection (always reject)", 0, 10, 9, reject},
		{"100%: 0/10 assigned (100% gap) → no rejection (never reject)", 100, 10, 0, noReject},
		{"50%: 6/10 assigned (40% gap) → no rejection", 50, 10, 6, noReject},
		{"50%: 4/10 assigned (60% gap) → rejection", 50, 10, 4, reject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pods []*corev1.Pod
			for i := 0; i < tt.assignedCount; i++ {
				name := fmt.Sprintf("assigned-%d", i)
				pods = append(pods, makePod("ns", name).UID(name).Node("node").Group("pg1").Obj())
			}
			pod := makePod("ns", "p").UID("p").Group("pg1").Obj()
			c := newCluster(t, []*PodGroup{makePG("ns", "pg1", tt.minMember).Obj()}, append(pods, pod), makeNode("node", "4"))
			pl := c.plugin(t, fmt.Sprintf(`{"podGroupRejectPercentage": %d}`, tt.threshold))
			_, _, got := pl.PostFilter(api.NewCycleState(), api.PodOf(pod), nil)
			if *got != *tt.want {
				t.Errorf("Want %v, but got %v", tt.want, got)
			}
		})
	}
}

func TestUnreserveRejectsSiblings(t *testing.T) {
	p1 := makePod("ns", "p1").UID("u1").Group("pg").Obj()
	p2 := makePod("ns", "p2").UID("u2").Group("pg").Obj()
	c := newCluster(t, []*PodGroup{makePG("ns", "pg", 3).Obj()}, []*corev1.Pod{p1, p2})
	pl := c.plugin(t, "")
	pl.Permit(api.NewCycleState(), api.PodOf(p1), "n")
	pl.Permit(api.NewCycleState(), api.PodOf(p2), "n")
	c.h.Waiting = []hosttest.WaitingPod{hosttest.Waiting(t, p1, Name)}
	pl.Unreserve(api.NewCycleState(), api.PodOf(p2), "n")
	if pl.pgMgr.GetAssignedPodCount("ns/pg") != 1 {
		t.Fatalf("assigned %d, want 1", pl.pgMgr.GetAssignedPodCount("ns/pg"))
	}
	if len(c.h.WaitingCalls) != 1 || c.h.WaitingCalls[0].Message != "rejection in Unreserve" || c.h.WaitingCalls[0].UID != "u1" {
		t.Fatalf("calls %+v", c.h.WaitingCalls)
	}
	if _, ok := pl.pgMgr.lastFailedSchedulePG["ns/pg"]; !ok {
		t.Fatal("no failure recorded")
	}
}

func TestPostBindCountsUntilDeleted(t *testing.T) {
	p1 := makePod("ns", "p1").UID("u1").Group("pg").Obj()
	p2 := makePod("ns", "p2").UID("u2").Group("pg").Obj()
	c := newCluster(t, []*PodGroup{makePG("ns", "pg", 2).Obj()}, []*corev1.Pod{p1, p2})
	pl := c.plugin(t, "")
	pl.Permit(api.NewCycleState(), api.PodOf(p1), "n")
	pl.PostBind(api.NewCycleState(), api.PodOf(p1), "n")
	// p1 is deleted: upstream's informer DeleteFunc forgets it, so p2 waits again.
	hosttest.SetPods(t, c.h, p2)
	if s, _ := pl.Permit(api.NewCycleState(), api.PodOf(p2), "n"); s.GetCode() != api.Wait {
		t.Fatalf("p2 after p1's deletion: %v", s)
	}
	// A member bound before the plugin started (upstream's AddFunc) counts.
	pl2 := c.plugin(t, "")
	bound := makePod("ns", "p0").UID("u0").Group("pg").Node("n").Obj()
	hosttest.SetPods(t, c.h, bound, p2)
	if s, _ := pl2.Permit(api.NewCycleState(), api.PodOf(p2), "n"); !s.IsSuccess() {
		t.Fatalf("p2 with a bound sibling: %v", s)
	}
}

func TestPreEnqueue(t *testing.T) {
	pgs := []*PodGroup{makePG("ns", "pg", 3).Obj()}
	a, b, d := makePod("ns", "a").Group("pg").Obj(), makePod("ns", "b").Group("pg").Obj(), makePod("ns", "d").Group("pg").Obj()
	c := newCluster(t, pgs, []*corev1.Pod{a, b})
	pl := c.plugin(t, "")
	if s := pl.PreEnqueue(api.PodOf(makePod("ns", "solo").Obj())); !s.IsSuccess() {
		t.Fatalf("a pod without a group: %v", s)
	}
	if s := pl.PreEnqueue(api.PodOf(makePod("ns", "x").Group("missing").Obj())); s.GetCode() != api.UnschedulableAndUnresolvable ||
		s.Message() != `waiting for pods's pod group "missing" to appear in scheduling queue` {
		t.Fatalf("a missing group: %v", s)
	}
	if s := pl.PreEnqueue(api.PodOf(a)); s.GetCode() != api.UnschedulableAndUnresolvable ||
		s.Message() != "waiting for minCount pods from a gang to appear in scheduling queue" {
		t.Fatalf("2 of 3: %v", s)
	}
	hosttest.SetPods(t, c.h, a, b, d)
	if s := pl.PreEnqueue(api.PodOf(a)); !s.IsSuccess() {
		t.Fatalf("3 of 3: %v", s)
	}
}

func TestEventsToRegister(t *testing.T) {
	pl, _ := NewWithClock(nil, time.Now)
	evs, err := pl.EventsToRegister()
	if err != nil || len(evs) != 2 || evs[0].Event != (framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Add}) ||
		evs[1].Event != (framework.ClusterEvent{Resource: "podgroups.v1alpha1.scheduling.x-k8s.io", ActionType: framework.Add | framework.Update}) {
		t.Fatalf("%+v %v", evs, err)
	}
}

func TestArgs(t *testing.T) {
	pl, err := NewWithClock(nil, time.Now)
	if err != nil || *pl.scheduleTimeout != 60*time.Second || pl.pgBackoff != nil || pl.pgRejectThreshold != 0.1 {
		t.Fatalf("defaults: %+v %v", pl, err)
	}
	pl, err = NewWithClock([]byte(`{"permitWaitingTimeSeconds": 5, "podGroupBackoffSeconds": 2, "podGroupRejectPercentage": 0}`), time.Now)
	if err != nil || *pl.scheduleTimeout != 5*time.Second || *pl.pgBackoff != 2*time.Second || pl.pgRejectThreshold != 0 {
		t.Fatalf("set: %+v %v", pl, err)
	}
	for cfg, want := range map[string]string{
		`{"permitWaitingTimeSeconds": -1}`:  "Coscheduling: invalid args: permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0",
		`{"podGroupBackoffSeconds": -1}`:    "Coscheduling: invalid args: podGroupBackoffSeconds: Invalid value: -1: must be greater than 0",
		`{"podGroupRejectPercentage": 101}`: "Coscheduling: invalid args: podGroupRejectPercentage: Invalid value: 101: must be between 0 and 100",
		`{"permitWaitingTimeSeconds": -1, "podGroupRejectPercentage": -1}`: "Coscheduling: invalid args: [permitWaitingTimeSeconds: " +
			"Invalid value: -1: must be greater than 0, podGroupRejectPercentage: Invalid value: -1: must be between 0 and 100]",
		`{"permitWaitingTime": 1}`: `Coscheduling: decoding guestConfig "{\"permitWaitingTime\": 1}": json: unknown field "permitWaitingTime"`,
	} {
		if _, err := NewWithClock([]byte(cfg), time.Now); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", cfg, err, want)
		}
	}
}
