//go:build !wasip1

package plugin

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/framework"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

// The tests below are this port's own: args, events, and what the guest reads from the host.

func TestNewDefaultsAndWeights(t *testing.T) {
	tm, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if tm.scoreStrategyType != LeastAllocated {
		t.Errorf("default strategy %q, want LeastAllocated", tm.scoreStrategyType)
	}
	if len(tm.resourceToWeightMap) != 2 || tm.resourceToWeightMap[v1.ResourceCPU] != 1 || tm.resourceToWeightMap[v1.ResourceMemory] != 1 {
		t.Errorf("default weights %v, want cpu and memory at 1", tm.resourceToWeightMap)
	}
	tm, err = New([]byte(`{"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 3}, {"name": "vendor/nic1"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if tm.resourceToWeightMap[v1.ResourceCPU] != 3 || tm.resourceToWeightMap["vendor/nic1"] != 1 || len(tm.resourceToWeightMap) != 2 {
		t.Errorf("weights %v", tm.resourceToWeightMap)
	}
}

func TestNewRefusesWhatIsNotPorted(t *testing.T) {
	for config, want := range map[string]string{
		`{"scoringStrategy": {"type": "Fastest"}}`:                `scoringStrategy.type: Invalid value: "Fastest": invalid ScoringStrategyType`,
		`{"scoringStrategy": {"type": "MostAllocated"}}`:          "MostAllocated is not ported",
		`{"scoringStrategy": {"type": "LeastNUMANodes"}}`:         "LeastNUMANodes is not ported",
		`{"preemptionMode": "Enabled"}`:                           "preemptionMode: Enabled is not ported",
		`{"preemptionMode": "Sometimes"}`:                         `preemptionMode: Invalid value: "Sometimes": invalid PreemptionMode`,
		`{"cacheResyncPeriodSeconds": 5}`:                         "the OverReserve cache is not ported",
		`{"discardReservedNodes": true}`:                          "the DiscardReserved cache is not ported",
		`{"scoringStrategy": {"type": "LeastAllocated"}, "x": 1}`: `unknown field "x"`,
	} {
		_, err := New([]byte(config))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%s) = %v, want an error with %q", config, err, want)
		}
	}
	if _, err := New([]byte(`{"cacheResyncPeriodSeconds": 0, "preemptionMode": "Disabled", "cache": {"foreignPodsDetect": "All"}}`)); err != nil {
		t.Errorf("the Passthrough cache's values: %v", err)
	}
}

func TestEventsToRegister(t *testing.T) {
	evs, err := (&TopologyMatch{}).EventsToRegister()
	if err != nil {
		t.Fatal(err)
	}
	want := []framework.ClusterEvent{
		{Resource: framework.Pod, ActionType: framework.Delete},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable},
		{Resource: "noderesourcetopologies.v1alpha2.topology.node.k8s.io", ActionType: framework.Add | framework.Update},
	}
	if len(evs) != len(want) {
		t.Fatalf("events %v", evs)
	}
	for i := range want {
		if evs[i].Event != want[i] || evs[i].QueueingHintFn != nil {
			t.Errorf("event %d = %+v, want %+v", i, evs[i], want[i])
		}
	}
	if framework.WatchedResource(NodeResourceTopologies.Group, NodeResourceTopologies.Version, NodeResourceTopologies.Resource) != want[2].Resource {
		t.Error("the NRT event resource is not the watched resource's name")
	}
}

func guaranteedPod(cpu, memory string) *v1.Pod {
	return makePodByResourceList(&v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(memory)})
}

func eightCPUNode(name string) *v1.Node {
	res := v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("16Gi")}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Capacity: res, Allocatable: res}}
}

// An NRT object as a user writes it, quantities as numbers and strings, served as the host serves
// it (the API server's JSON): the guest decodes it into the typed struct.
const nrtJSON = `{"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
 "metadata": {"name": "numa-a", "resourceVersion": "7"},
 "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"}, {"name": "topologyManagerScope", "value": "%s"}],
 "zones": [
  {"name": "node-0", "type": "Node", "resources": [{"name": "cpu", "capacity": 4, "allocatable": 4, "available": 4},
   {"name": "memory", "capacity": "8Gi", "allocatable": "8Gi", "available": "8Gi"}]},
  {"name": "node-1", "type": "Node", "costs": [{"name": "node-0", "value": 20}, {"name": "node-1", "value": 10}],
   "resources": [{"name": "cpu", "capacity": "4", "allocatable": "4", "available": "4"},
   {"name": "memory", "capacity": "8Gi", "allocatable": "8Gi", "available": "8Gi"}]}]}`

func installJSON(t *testing.T, scope string) *TopologyMatch {
	h := hosttest.Install(t, &hosttest.Host{Objects: map[string][][]byte{
		nrtKey: {[]byte(strings.Replace(nrtJSON, "%s", scope, 1))}}})
	hosttest.SetSnapshot(t, h, hosttest.SnapshotNode{Node: eightCPUNode("numa-a")}, hosttest.SnapshotNode{Node: eightCPUNode("no-nrt")})
	tm, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestFilterAlignsOnOneZoneNotTheNodeTotal(t *testing.T) {
	for _, tc := range []struct {
		scope, cpu string
		want       *api.Status
	}{
		{"container", "4", nil},
		{"container", "6", api.NewStatus(api.Unschedulable, "cannot align container")},
		{"pod", "4", nil},
		{"pod", "6", api.NewStatus(api.Unschedulable, "cannot align pod")},
	} {
		tm := installJSON(t, tc.scope)
		pod := guaranteedPod(tc.cpu, "2Gi")
		got := tm.Filter(api.NewCycleState(), api.PodOf(pod), snapshotNodeInfo(t, "numa-a"))
		if !quasiEqualStatus(got, tc.want) || (got == nil) != (tc.want == nil) || (got != nil && got.Message() != tc.want.Message()) {
			t.Errorf("%s scope, %s CPUs: %v, want %v", tc.scope, tc.cpu, got, tc.want)
		}
		// a node without an NRT object: upstream lets the pod pass
		if got := tm.Filter(api.NewCycleState(), api.PodOf(pod), snapshotNodeInfo(t, "no-nrt")); got != nil {
			t.Errorf("no NRT object: %v, want Success", got)
		}
	}
}

func TestContainerScopeSplitsContainersOverZones(t *testing.T) {
	// two 3-CPU containers: one per zone at container scope; pod scope needs 6 CPUs in one zone.
	three := v1.ResourceList{v1.ResourceCPU: resource.MustParse("3"), v1.ResourceMemory: resource.MustParse("1Gi")}
	pod := makePodByResourceLists(three, three)
	for scope, want := range map[string]string{"container": "", "pod": "cannot align pod"} {
		tm := installJSON(t, scope)
		got := tm.Filter(api.NewCycleState(), api.PodOf(pod), snapshotNodeInfo(t, "numa-a"))
		if got.Message() != want {
			t.Errorf("%s scope: %v, want %q", scope, got, want)
		}
	}
	// and a third one fits no zone any more: zone 0 has 1 CPU left, zone 1 too.
	tm := installJSON(t, "container")
	got := tm.Filter(api.NewCycleState(), api.PodOf(makePodByResourceLists(three, three, three)), snapshotNodeInfo(t, "numa-a"))
	if got.Message() != "cannot align container" {
		t.Errorf("three containers: %v", got)
	}
}

func TestScoreLeastAllocatedPerZoneWithWeights(t *testing.T) {
	tm := installJSON(t, "container")
	pod := guaranteedPod("2", "2Gi")
	// per zone: cpu (4-2)*100/4 = 50, memory (8-2)*100/8 = 75 → (50+75)/2 = 62; the lowest zone score
	score, st := tm.Score(api.NewCycleState(), api.PodOf(pod), snapshotNodeInfo(t, "numa-a"))
	if st != nil || score != 62 {
		t.Errorf("score %d %v, want 62", score, st)
	}
	tm, err := New([]byte(`{"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 3}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	// cpu 50*3 + memory 75*1 (default weight) over 4 = 56
	if score, _ := tm.Score(api.NewCycleState(), api.PodOf(pod), snapshotNodeInfo(t, "numa-a")); score != 56 {
		t.Errorf("weighted score %d, want 56", score)
	}
	// no NRT object: 0; a Burstable pod: MaxNodeScore
	if score, _ := tm.Score(api.NewCycleState(), api.PodOf(pod), snapshotNodeInfo(t, "no-nrt")); score != 0 {
		t.Errorf("no NRT: %d, want 0", score)
	}
	burstable := makePodWithReqByResourceList(&v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")})
	if score, _ := tm.Score(api.NewCycleState(), api.PodOf(burstable), snapshotNodeInfo(t, "numa-a")); score != MaxNodeScore {
		t.Errorf("burstable: %d, want %d", score, MaxNodeScore)
	}
}

func TestDecodedObjectKeepsCosts(t *testing.T) {
	installJSON(t, "pod")
	nrt, info := passthrough{lister: handle.Objects(NodeResourceTopologies)}.GetCachedNRTCopy("numa-a", nil)
	if !info.Fresh || nrt == nil {
		t.Fatalf("%v %v", nrt, info)
	}
	nodes := createNUMANodeList(nrt.Zones)
	if len(nodes) != 2 || nodes[1].Costs[0] != 20 || nodes[1].Costs[1] != 10 || len(nodes[0].Costs) != 0 {
		t.Errorf("%+v", nodes)
	}
	if q := nodes[0].Resources[v1.ResourceCPU]; q.Value() != 4 {
		t.Errorf("cpu given as a number: %v", q.String())
	}
}

func TestFilterNodeNotFound(t *testing.T) {
	tm := installJSON(t, "pod")
	got := tm.Filter(api.NewCycleState(), api.PodOf(guaranteedPod("1", "1Gi")), api.NodeInfoOf(nil, nil))
	if got.GetCode() != api.Error || got.Message() != "node not found" {
		t.Errorf("%v", got)
	}
}
