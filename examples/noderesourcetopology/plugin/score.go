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

package plugin

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/examples/noderesourcetopology/plugin/nodeconfig"
	"github.com/wasmsched/wasmsched/sdk/go/api"
)

const (
	defaultWeight = int64(1)

	// MaxNodeScore is the framework's fwk.MaxNodeScore.
	MaxNodeScore = int64(100)
)

type scoreStrategyFn func(corev1.ResourceList, corev1.ResourceList, resourceToWeightMap) int64

// resourceToWeightMap contains resource name and weight.
type resourceToWeightMap map[corev1.ResourceName]int64

// weight return the weight of the resource and defaultWeight if weight not specified
func (rw resourceToWeightMap) weight(r corev1.ResourceName) int64 {
	w, ok := (rw)[r]
	if !ok {
		return defaultWeight
	}

	if w < 1 {
		return defaultWeight
	}

	return w
}

func (tm *TopologyMatch) Score(_ api.CycleState, podInfo api.PodInfo, nodeInfo api.NodeInfo) (int64, *api.Status) {
	// upstream: nodeInfo.Node().Name; the name needs no decoding of the node.
	nodeName := nodeInfo.Name()

	pod := podInfo.Pod()
	// if it's a non-guaranteed pod, every node is considered to be a good fit
	qos := getPodQOS(pod)
	if qos != corev1.PodQOSGuaranteed {
		return MaxNodeScore, nil
	}

	nodeTopology, info := tm.nrtCache.GetCachedNRTCopy(nodeName, pod)
	if !info.Fresh {
		return 0, nil
	}
	if nodeTopology == nil {
		return 0, nil
	}

	conf := nodeconfig.TopologyManagerFromNodeResourceTopology(nodeTopology)
	handler := tm.scoringHandlerFromTopologyManagerConfig(conf)
	if handler == nil {
		return 0, nil
	}
	numaNodes := createNUMANodeList(nodeTopology.Zones)
	si := scoreInfo{
		topologyManager: conf,
		qos:             qos,
		numaNodes:       numaNodes,
	}
	return handler(pod, &si)
}

// scoreForEachNUMANode will iterate over all NUMA zones of the node and invoke the scoreStrategyFn func for every zone.
// it will return the minimal score of all the calculated NUMA's score, in order to avoid edge cases.
func scoreForEachNUMANode(requested corev1.ResourceList, numaList NUMANodeList, score scoreStrategyFn, resourceToWeightMap resourceToWeightMap) int64 {
	// upstream also keeps numaScores[numa.NUMAID] for its log, which panics for sparse NUMA ids
	// (node-0, node-3 on a 2-zone list); the log is left out, and so is the slice.
	minScore := int64(0)

	for _, numa := range numaList {
		numaScore := score(requested, numa.Resources, resourceToWeightMap)
		// if NUMA's score is 0, i.e. not fit at all, it won't be taken under consideration by Kubelet.
		if (minScore == 0) || (numaScore != 0 && numaScore < minScore) {
			minScore = numaScore
		}
	}
	return minScore
}

func getScoringStrategyFunction(strategy ScoringStrategyType) (scoreStrategyFn, error) {
	switch strategy {
	case LeastAllocated:
		return leastAllocatedScoreStrategy, nil
	case MostAllocated, BalancedAllocation, LeastNUMANodes:
		return nil, fmt.Errorf("scoring strategy %s is not ported", strategy)
	default:
		return nil, fmt.Errorf("illegal scoring strategy found")
	}
}

func podScopeScore(pod *corev1.Pod, info *scoreInfo, scorerFn scoreStrategyFn, resourceToWeightMap resourceToWeightMap) (int64, *api.Status) {
	// This code is in Admit implementation of pod scope
	// https://github.com/kubernetes/kubernetes/blob/9ff3b7e744b34c099c1405d9add192adbef0b6b1/pkg/kubelet/cm/topologymanager/scope_pod.go#L52
	// but it works with HintProviders, takes into account all possible allocations.
	resources := getPodEffectiveRequest(pod)
	finalScore := scoreForEachNUMANode(resources, info.numaNodes, scorerFn, resourceToWeightMap)
	return finalScore, nil
}

func containerScopeScore(pod *corev1.Pod, info *scoreInfo, scorerFn scoreStrategyFn, resourceToWeightMap resourceToWeightMap) (int64, *api.Status) {
	// This code is in Admit implementation of container scope
	// https://github.com/kubernetes/kubernetes/blob/9ff3b7e744b34c099c1405d9add192adbef0b6b1/pkg/kubelet/cm/topologymanager/scope_container.go#L52
	containers := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	contScore := make([]float64, len(containers))

	for i, container := range containers {
		contScore[i] = float64(scoreForEachNUMANode(container.Resources.Requests, info.numaNodes, scorerFn, resourceToWeightMap))
	}
	finalScore := int64(mean(contScore))
	return finalScore, nil
}

// mean is gonum's stat.Mean(x, nil).
func mean(x []float64) float64 {
	var sum float64
	for _, v := range x {
		sum += v
	}
	return sum / float64(len(x))
}

func (tm *TopologyMatch) scoringHandlerFromTopologyManagerConfig(conf nodeconfig.TopologyManager) scoringFn {
	// upstream's LeastNUMANodes strategy, the one that scores every policy, is not ported (New refuses it).
	if conf.Policy != nodeconfig.SingleNumaNodeTopologyManagerPolicy {
		return nil
	}
	if conf.Scope == nodeconfig.PodTopologyManagerScope {
		return func(pod *corev1.Pod, info *scoreInfo) (int64, *api.Status) {
			return podScopeScore(pod, info, tm.scoreStrategyFunc, tm.resourceToWeightMap)
		}
	}
	if conf.Scope == nodeconfig.ContainerTopologyManagerScope {
		return func(pod *corev1.Pod, info *scoreInfo) (int64, *api.Status) {
			return containerScopeScore(pod, info, tm.scoreStrategyFunc, tm.resourceToWeightMap)
		}
	}
	return nil // cannot happen
}
