//go:build !wasip1

/*
Copyright 2021 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Upstream's score_test.go (scheduler-plugins pkg/noderesourcetopology): the cases of the
// LeastAllocated strategy, the one ported; the harness runs on the SDK's fake host (helpers_test.go).

package plugin

import (
	"reflect"
	"testing"

	topologyv1alpha2 "github.com/k8stopologyawareschedwg/noderesourcetopology-api/pkg/apis/topology/v1alpha2"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
)

const (
	gpu = "gpu"
)

type nodeToScoreMap map[string]int64

type nrtFilterFn func(nrt *topologyv1alpha2.NodeResourceTopology) *topologyv1alpha2.NodeResourceTopology

func nrtPassthrough(nrt *topologyv1alpha2.NodeResourceTopology) *topologyv1alpha2.NodeResourceTopology {
	return nrt
}

// initTest is upstream's, with the objects kept for the fake host (installHost) instead of a fake client.
func initTest(nodeTopologies []*topologyv1alpha2.NodeResourceTopology, nrtFilter nrtFilterFn) (map[string]*v1.Node, []*topologyv1alpha2.NodeResourceTopology) {
	nodesMap := make(map[string]*v1.Node)

	// init node objects
	for _, nrt := range nodeTopologies {
		res := makeResourceListFromZones(nrt.Zones)
		nodesMap[nrt.Name] = &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: nrt.Name},
			Status: v1.NodeStatus{
				Capacity:    res,
				Allocatable: res,
			},
		}
	}

	var nrts []*topologyv1alpha2.NodeResourceTopology
	for _, obj_ := range nodeTopologies {
		obj := nrtFilter(obj_)
		if obj == nil {
			continue
		}
		nrts = append(nrts, obj.DeepCopy())
	}

	return nodesMap, nrts
}

func nodeList(nodesMap map[string]*v1.Node) []*v1.Node {
	var nodes []*v1.Node
	for _, n := range nodesMap {
		nodes = append(nodes, n)
	}
	return nodes
}

func TestNodeResourceScorePlugin(t *testing.T) {

	type podRequests struct {
		pod        *v1.Pod
		name       string
		wantStatus *api.Status
	}
	pRequests := []podRequests{
		{
			pod: makePodByResourceList(&v1.ResourceList{
				v1.ResourceCPU:    *resource.NewQuantity(2, resource.DecimalSI),
				v1.ResourceMemory: *resource.NewQuantity(20*1024*1024, resource.DecimalSI)}),
			name:       "Pod1",
			wantStatus: nil,
		},
	}

	// Each testScenario will describe a set pod requests arrived sequentially to the scoring plugin.
	type testScenario struct {
		name      string
		wantedRes nodeToScoreMap
		requests  []podRequests
		strategy  scoreStrategyFn
	}

	tests := []testScenario{
		{
			// On 0-MaxNodeScore scale
			// Node1 resource fractions:
			// CPU Fraction: 2 / 4 = 50%
			// Memory Fraction: 20M / 500M = 4%
			// Node1 score: ((100 - 50) + (100 - 4)) / 2 = 73
			name:      "LeastAllocated strategy",
			wantedRes: nodeToScoreMap{"Node1": 73},
			requests:  pRequests,
			strategy:  leastAllocatedScoreStrategy,
		},
	}

	for _, test := range tests {
		nodesMap, nrts := initTest(defaultNUMANodes(withPolicy(topologyv1alpha2.SingleNUMANodeContainerLevel)), nrtPassthrough)
		t.Run(test.name, func(t *testing.T) {
			installHost(t, nrts, nodeList(nodesMap)...)
			tm := &TopologyMatch{
				scoreStrategyFunc: test.strategy,
				nrtCache:          passthrough{lister: handle.Objects(NodeResourceTopologies)},
			}

			for _, req := range test.requests {
				nodeToScore := make(nodeToScoreMap, len(nodesMap))
				for _, node := range nodesMap {
					score, gotStatus := tm.Score(
						api.NewCycleState(),
						api.PodOf(req.pod),
						snapshotNodeInfo(t, node.Name))

					t.Logf("%v; %v; %v; score: %v; status: %v\n",
						test.name,
						req.name,
						node.ObjectMeta.Name,
						score,
						gotStatus)

					if !reflect.DeepEqual(gotStatus, req.wantStatus) {
						t.Errorf("status does not match: %v, want: %v\n", gotStatus, req.wantStatus)
					}
					nodeToScore[node.ObjectMeta.Name] = score
				}
				gotNode := findMaxScoreNode(nodeToScore)
				gotScore := nodeToScore[gotNode]
				t.Logf("%q: got node %q with score %d\n", test.name, gotNode, gotScore)
				for wantNode, wantScore := range test.wantedRes {
					if wantNode != gotNode {
						t.Errorf("failed to select the desired node: wanted: %q, got: %q", wantNode, gotNode)
					}

					if wantScore != gotScore {
						t.Errorf("wrong score for node %q: wanted: %d, got: %d", gotNode, wantScore, gotScore)
					}
				}
			}
		})
	}
}

func TestNodeResourcePartialDataScorePlugin(t *testing.T) {
	type podRequests struct {
		pod        *v1.Pod
		name       string
		wantStatus *api.Status
	}
	pRequests := []podRequests{
		{
			pod: makePodByResourceList(&v1.ResourceList{
				v1.ResourceCPU:    *resource.NewQuantity(2, resource.DecimalSI),
				v1.ResourceMemory: *resource.NewQuantity(20*1024*1024, resource.DecimalSI)}),
			name:       "Pod1",
			wantStatus: nil,
		},
	}

	type testScenario struct {
		name      string
		wantedRes nodeToScoreMap
		requests  []podRequests
		strategy  scoreStrategyFn
		nrtFilter nrtFilterFn
	}

	tests := []testScenario{
		{
			name:      "No data at all, LeastAllocated strategy",
			wantedRes: nodeToScoreMap{},
			requests:  pRequests,
			strategy:  leastAllocatedScoreStrategy,
			nrtFilter: func(nrt *topologyv1alpha2.NodeResourceTopology) *topologyv1alpha2.NodeResourceTopology {
				return nil
			},
		},
		{
			name:      "One node with NRT data, LeastAllocated strategy",
			wantedRes: nodeToScoreMap{"Node1": 73},
			requests:  pRequests,
			strategy:  leastAllocatedScoreStrategy,
			nrtFilter: func(nrt *topologyv1alpha2.NodeResourceTopology) *topologyv1alpha2.NodeResourceTopology {
				if nrt.Name != "Node1" {
					return nil
				}
				return nrt
			},
		},
	}

	for _, test := range tests {
		nodesMap, nrts := initTest(defaultNUMANodes(withPolicy(topologyv1alpha2.SingleNUMANodeContainerLevel)), test.nrtFilter)
		t.Run(test.name, func(t *testing.T) {
			installHost(t, nrts, nodeList(nodesMap)...)
			tm := &TopologyMatch{
				scoreStrategyFunc: test.strategy,
				nrtCache:          passthrough{lister: handle.Objects(NodeResourceTopologies)},
			}

			for _, req := range test.requests {
				nodeToScore := make(nodeToScoreMap, len(nodesMap))
				for _, node := range nodesMap {
					score, gotStatus := tm.Score(
						api.NewCycleState(),
						api.PodOf(req.pod),
						snapshotNodeInfo(t, node.Name))

					t.Logf("%v; %v; %v; score: %v; status: %v\n",
						test.name,
						req.name,
						node.ObjectMeta.Name,
						score,
						gotStatus)

					if !reflect.DeepEqual(gotStatus, req.wantStatus) {
						t.Errorf("status does not match: %v, want: %v\n", gotStatus, req.wantStatus)
					}
					nodeToScore[node.ObjectMeta.Name] = score
				}
				gotNode := findMaxScoreNode(nodeToScore)
				gotScore := nodeToScore[gotNode]
				t.Logf("%q: got node %q with score %d\n", test.name, gotNode, gotScore)
				for wantNode, wantScore := range test.wantedRes {
					if wantNode != gotNode {
						t.Errorf("failed to select the desired node: wanted: %q, got: %q", wantNode, gotNode)
					}

					if wantScore != gotScore {
						t.Errorf("wrong score for node %q: wanted: %d, got: %d", gotNode, wantScore, gotScore)
					}
				}
			}
		})
	}
}

// return the name of the node with the highest score
func findMaxScoreNode(nodeToScore nodeToScoreMap) string {
	max := int64(0)
	electedNode := ""

	for nodeName, score := range nodeToScore {
		if max <= score {
			max = score
			electedNode = nodeName
		}
	}
	return electedNode
}

type nrtUpdater func(nrt *topologyv1alpha2.NodeResourceTopology)

func withPolicy(policy topologyv1alpha2.TopologyManagerPolicy) nrtUpdater {
	return func(nrt *topologyv1alpha2.NodeResourceTopology) {
		nrt.TopologyPolicies = []string{string(policy)}
	}
}

func defaultNUMANodes(upds ...nrtUpdater) []*topologyv1alpha2.NodeResourceTopology {
	nrts := []*topologyv1alpha2.NodeResourceTopology{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "Node1"},
			Zones: topologyv1alpha2.ZoneList{
				topologyv1alpha2.Zone{
					Name: "node-0",
					Type: "Node",
					Resources: topologyv1alpha2.ResourceInfoList{
						MakeTopologyResInfo(cpu, "4", "4"),
						MakeTopologyResInfo(memory, "500Mi", "500Mi"),
					},
				},
				topologyv1alpha2.Zone{
					Name: "node-1",
					Type: "Node",
					Resources: topologyv1alpha2.ResourceInfoList{
						MakeTopologyResInfo(cpu, "4", "4"),
						MakeTopologyResInfo(memory, "500Mi", "500Mi"),
					},
				},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "Node2"},
			Zones: topologyv1alpha2.ZoneList{
				topologyv1alpha2.Zone{
					Name: "node-0",
					Type: "Node",
					Resources: topologyv1alpha2.ResourceInfoList{
						MakeTopologyResInfo(cpu, "2", "2"),
						MakeTopologyResInfo(memory, "50Mi", "50Mi"),
					},
				}, topologyv1alpha2.Zone{
					Name: "node-1",
					Type: "Node",
					Resources: topologyv1alpha2.ResourceInfoList{
						MakeTopologyResInfo(cpu, "2", "2"),
						MakeTopologyResInfo(memory, "50Mi", "50Mi"),
					},
				},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "Node3"},
			Zones: topologyv1alpha2.ZoneList{
				topologyv1alpha2.Zone{
					Name: "node-0",
					Type: "Node",
					Resources: topologyv1alpha2.ResourceInfoList{
						MakeTopologyResInfo(cpu, "6", "6"),
						MakeTopologyResInfo(memory, "60Mi", "60Mi"),
					},
				}, topologyv1alpha2.Zone{
					Name: "node-1",
					Type: "Node",
					Resources: topologyv1alpha2.ResourceInfoList{
						MakeTopologyResInfo(cpu, "6", "6"),
						MakeTopologyResInfo(memory, "60Mi", "60Mi"),
					},
				},
			},
		},
	}
	for _, upd := range upds {
		for idx := range nrts {
			// make sure to mutate the original object in the collection
			upd(nrts[idx])
		}
	}
	return nrts
}
