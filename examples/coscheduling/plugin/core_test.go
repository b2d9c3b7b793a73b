//go:build !wasip1

package coscheduling

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
)

// Ported from pkg/coscheduling/core/core_test.go of kubernetes-sigs/scheduler-plugins at 903da7df.

func TestPreFilter(t *testing.T) {
	nodes := []*corev1.Node{makeNode("node-a", "4"), makeNode("node-b", "4")}
	g := func(name, uid, pg string) *podB { return makePod("ns", name).UID(uid).Group(pg) }
	tests := []struct {
		name            string
		pod             *corev1.Pod
		pendingPods     []*corev1.Pod
		pgs             []*PodGroup
		expectedSuccess bool
	}{
		{"pod does not belong to any pg", makePod("", "p").Obj(),
			[]*corev1.Pod{g("p1", "p1", "pg1").Obj(), g("p2", "p2", "pg2").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 1).Obj(), makePG("ns", "pg2", 1).Obj()}, true},
		{"pod belongs to a non-existent pg", g("p", "p", "pg-non-existent").Obj(), nil,
			[]*PodGroup{makePG("ns", "pg1", 1).Obj()}, true},
		{"pod count less than minMember", g("p", "p", "pg1").Obj(), []*corev1.Pod{g("pg2-1", "p2-1", "pg2").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 2).Obj(), makePG("ns", "pg2", 2).Obj()}, false},
		{"pod count equal minMember", g("p1a", "p1a", "pg1").Obj(), []*corev1.Pod{g("p1b", "p1b", "pg1").Obj(), g("p1c", "p1c", "pg1").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 2).Obj(), makePG("ns", "pg2", 2).Obj()}, true},
		{"pod count more than minMember", g("p1a", "p1a", "pg1").Obj(), []*corev1.Pod{g("p1b", "p1b", "pg1").Obj(), g("p1c", "p1c", "pg1").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 2).Obj(), makePG("ns", "pg2", 2).Obj()}, true},
		{"gated pods but still meeting quorum (minMember < replicas)", g("p1a", "p1a", "pg1").Obj(),
			[]*corev1.Pod{g("p1b", "p1b", "pg1").Obj(), g("p1c", "p1c", "pg1").Gates("example-gate").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 2).Obj()}, true},
		{"gated pods push group below quorum", g("p1a", "p1a", "pg1").Obj(),
			[]*corev1.Pod{g("p1b", "p1b", "pg1").Gates("example-gate").Obj(), g("p1c", "p1c", "pg1").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 3).Obj()}, false},
		{"all sibling pods are gated", g("p1a", "p1a", "pg1").Obj(),
			[]*corev1.Pod{g("p1b", "p1b", "pg1").Gates("example-gate").Obj(), g("p1c", "p1c", "pg1").Gates("example-gate").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 2).Obj()}, false},
		{"cluster's resource satisfies minResource", g("p1a", "p1a", "pg1").Obj(),
			[]*corev1.Pod{g("p1b", "p1b", "pg1").Obj(), g("p1c", "p1c", "pg1").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 2).MinResources("6").Obj()}, true},
		{"cluster's resource cannot satisfy minResource", g("p1a", "p1a", "pg1").Obj(),
			[]*corev1.Pod{g("p1b", "p1b", "pg1").Obj(), g("p1c", "p1c", "pg1").Obj()},
			[]*PodGroup{makePG("ns", "pg1", 2).MinResources("10").Obj()}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newCluster(t, tt.pgs, append(tt.pendingPods, tt.pod), nodes...)
			timeout := 10 * time.Second
			pgMgr := NewPodGroupManager(&timeout, handle.Now)
			err := pgMgr.PreFilter(tt.pod)
			if (err == nil) != tt.expectedSuccess {
				t.Errorf("Want %v, but got %v", tt.expectedSuccess, err)
			}
		})
	}
}

// The permittedPG cache skips the resource check for scheduleTimeout, on the scheduler's clock.
func TestPreFilterPermittedTTL(t *testing.T) {
	pods := []*corev1.Pod{makePod("ns", "a").UID("a").Group("pg").Obj(), makePod("ns", "b").UID("b").Group("pg").Obj()}
	c := newCluster(t, []*PodGroup{makePG("ns", "pg", 2).MinResources("6").Obj()}, pods, makeNode("n1", "4"), makeNode("n2", "4"))
	timeout := 10 * time.Second
	pgMgr := NewPodGroupManager(&timeout, func() time.Time { return c.h.Now })
	if err := pgMgr.PreFilter(pods[0]); err != nil {
		t.Fatal(err)
	}
	pulls := c.h.Calls["handle.snapshot.changes"]
	if err := pgMgr.PreFilter(pods[1]); err != nil || c.h.Calls["handle.snapshot.changes"] != pulls {
		t.Fatalf("the permitted group was checked again: %v", err)
	}
	c.h.Now = c.h.Now.Add(timeout + time.Nanosecond)
	c.h.Objects[pgKey] = [][]byte{mustJSON(t, makePG("ns", "pg", 2).MinResources("9").Obj())}
	if err := pgMgr.PreFilter(pods[1]); err == nil {
		t.Fatal("after the TTL the resource check did not run again")
	}
}

func TestPermitManager(t *testing.T) {
	tests := []struct {
		name         string
		pod          *corev1.Pod
		existingPods []*corev1.Pod
		want         Status
	}{
		{"pod does not belong to any pg", makePod("ns", "p").UID("p").Obj(), nil, PodGroupNotSpecified},
		{"pod specifies a non-existent pg", makePod("ns", "p").UID("p").Group("pg-non-existent").Obj(), nil, PodGroupNotFound},
		{"pod belongs to a pg that doesn't have quorum", makePod("ns", "p").UID("p").Group("pg1").Obj(), nil, Wait},
		{"pod belongs to a pg that have quorum satisfied", makePod("ns", "p1a").UID("p1a").Group("pg1").Obj(),
			[]*corev1.Pod{makePod("ns", "p1b").UID("p1b").Group("pg1").Node("node").Obj()}, Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newCluster(t, []*PodGroup{makePG("ns", "pg1", 2).Obj()}, append(tt.existingPods, tt.pod), makeNode("node", "4"))
			timeout := 10 * time.Second
			pgMgr := NewPodGroupManager(&timeout, handle.Now)
			if got := pgMgr.Permit(api.NewCycleState(), tt.pod); got != tt.want {
				t.Errorf("Want %v, but got %v", tt.want, got)
			}
		})
	}
}

func TestCheckClusterResource(t *testing.T) {
	nodes := []*corev1.Node{makeNode("node-a", "3"), makeNode("node-b", "3")}
	tests := []struct {
		name         string
		existingPods []*corev1.Pod
		want         bool
	}{
		{"Cluster resource enough", []*corev1.Pod{makePod("ns", "p1").UID("p1").Node("node-a").CPU("2").Obj()}, true},
		{"Cluster resource not enough", []*corev1.Pod{makePod("ns", "p1").UID("p1").Node("node-a").CPU("2").Obj(),
			makePod("ns", "p2").UID("p2").Node("node-b").CPU("1").Obj()}, false},
		{"Cluster resource enough as p1's resource needs to be excluded from minResources",
			[]*corev1.Pod{makePod("ns", "p1").UID("p1").Group("pg1").Node("node-a").CPU("2").Obj(),
				makePod("ns", "p2").UID("p2").Node("node-b").CPU("1").Obj()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newCluster(t, nil, tt.existingPods, nodes...)
			infos, _ := handle.SnapshotSharedLister().NodeInfos().List()
			minResources := corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(4, resource.DecimalSI)}
			err := CheckClusterResource(infos, minResources, "ns/pg1")
			if (err == nil) != tt.want {
				t.Errorf("Expect the cluster resource to be satisfied: %v, but got %v", tt.want, err)
			}
		})
	}
}

func TestMarkAndClearPodGroupScheduleFailure(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 3, 55, 0, time.UTC)
	c := newCluster(t, []*PodGroup{makePG("ns", "pg1", 3).Time(created).Obj()}, nil)
	timeout := 10 * time.Second
	pgMgr := NewPodGroupManager(&timeout, handle.Now)
	pod := makePod("ns", "p1").Group("pg1").Obj()
	ts := c.h.Now
	if got := pgMgr.GetCreationTimestamp(pod, ts); !got.Equal(created) {
		t.Errorf("Expected PodGroup creation timestamp %v, got %v", created, got)
	}
	pgMgr.MarkPodGroupScheduleFailure("ns/pg1")
	if got := pgMgr.GetCreationTimestamp(pod, ts); !got.Equal(c.h.Now) || !got.After(created) {
		t.Errorf("Expected the failure time %v (the scheduler's clock), got %v", c.h.Now, got)
	}
	pgMgr.ClearPodGroupScheduleFailure("ns/pg1")
	if got := pgMgr.GetCreationTimestamp(pod, ts); !got.Equal(created) {
		t.Errorf("Expected PodGroup creation timestamp %v after clear, got %v", created, got)
	}
	if got := pgMgr.GetCreationTimestamp(makePod("ns", "p").Obj(), ts); !got.Equal(ts) {
		t.Errorf("a pod without a group: %v", got)
	}
}

func TestGetPodGroupReadsQuantitiesAsNumbers(t *testing.T) {
	c := newCluster(t, nil, nil)
	c.h.Objects[pgKey] = [][]byte{[]byte(`{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup",` +
		`"metadata":{"namespace":"ns","name":"pg"},"spec":{"minMember":2,"minResources":{"cpu":3,"memory":"1Gi"},"scheduleTimeoutSeconds":7}}`)}
	full, pg, err := GetPodGroup(makePod("ns", "p").Group("pg").Obj())
	if err != nil || full != "ns/pg" || pg.Spec.MinMember != 2 || pg.Spec.MinResources.Cpu().Value() != 3 ||
		*pg.Spec.ScheduleTimeoutSeconds != 7 {
		t.Fatalf("%s %+v %v", full, pg, err)
	}
}
