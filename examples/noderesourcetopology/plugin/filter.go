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
	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/examples/noderesourcetopology/plugin/nodeconfig"
	"github.com/wasmsched/wasmsched/examples/noderesourcetopology/plugin/resourcerequests"
	"github.com/wasmsched/wasmsched/sdk/go/api"
)

// Container kinds of upstream's logging package, in the reason of an init container.
const (
	kindContainerInit    = "init"
	kindContainerSidecar = "sidecar"
)

func getInitContainerKind(container *corev1.Container) string {
	if isSidecarInitContainer(container) {
		return kindContainerSidecar
	}
	return kindContainerInit
}

func singleNUMAContainerLevelHandler(pod *corev1.Pod, info *filterInfo) *api.Status {
	// the init containers are running SERIALLY and BEFORE the normal containers.
	// https://kubernetes.io/docs/concepts/workloads/pods/init-containers/#understanding-init-containers
	// therefore, we don't need to accumulate their resources together
	for i := range pod.Spec.InitContainers {
		initContainer := &pod.Spec.InitContainers[i]
		cntKind := getInitContainerKind(initContainer)
		_, match, _ := resourcesAvailableInAnyNUMANodes(info, initContainer.Resources.Requests)
		if !match {
			msg := "cannot align " + cntKind + " container"
			// we can't align init container, so definitely we can't align a pod
			return api.NewStatus(api.Unschedulable, msg)
		}
	}

	for _, container := range pod.Spec.Containers {
		numaID, match, _ := resourcesAvailableInAnyNUMANodes(info, container.Resources.Requests)
		if !match {
			// we can't align container, so definitely we can't align a pod
			return api.NewStatus(api.Unschedulable, "cannot align container")
		}

		// subtract the resources requested by the container from the given NUMA.
		// this is necessary, so we won't allocate the same resources for the upcoming containers
		err := subtractResourcesFromNUMANodeList(info.numaNodes, numaID, info.qos, container.Resources.Requests)
		if err != nil {
			// this is an internal error which should never happen
			return api.NewStatus(api.Error, "inconsistent resource accounting", err.Error())
		}
	}
	return nil
}

// resourcesAvailableInAnyNUMANodes checks for sufficient resource.
// returns:
// - the NUMAID that would be selected by Kubelet,
// - a boolean which tells if the worker node can satisfy the request in any of its NUMA zones
// - the reason for reject.
// the reason for reject is significant only if the worker node is filtered out;
// the selected numaID is significant only if the worker node is filtered in.
// The function takes a `filterInfo` struct which must be filled with the `nodeInfo` provided by the scheduler framework,
// the NUMANodeList built using createNUMANodeList, the topology manager configuration from the NRT objects pertaining
// to the candidate node.
func resourcesAvailableInAnyNUMANodes(info *filterInfo, resources corev1.ResourceList) (int, bool, string) {
	numaID := info.topologyManager.MaxNUMANodes // highest NUMA ID
	bitmask := newEmptyBitMask()
	// set all bits, each bit is a NUMA node, if resources couldn't be aligned
	// on the NUMA node, bit should be unset
	bitmask.Fill()

	// upstream: util.ResourceList(info.node.GetAllocatable()), the NodeInfo's allocatable from the
	// snapshot (docs/abi.md §14.1).
	nodeResources := info.node.Allocatable().ResourceList()

	for resource, quantity := range resources {
		if quantity.IsZero() {
			// why bother? everything's fine from the perspective of this resource
			continue
		}

		if _, ok := nodeResources[resource]; !ok {
			// some resources may not expose NUMA affinity (device plugins, extended resources), but all resources
			// must be reported at node level; thus, if they are not present at node level, we can safely assume
			// we don't have the resource at all.
			return -1, false, string(resource)
		}

		// for each requested resource, calculate which NUMA slots are good fits, and then AND with the aggregated bitmask, IOW unset appropriate bit if we can't align resources, or set it
		// obvious, bits which are not in the NUMA id's range would be unset
		hasNUMAAffinity := false
		resourceBitmask := newEmptyBitMask()
		for _, numaNode := range info.numaNodes {
			numaQuantity, ok := numaNode.Resources[resource]
			if !ok {
				continue
			}

			hasNUMAAffinity = true
			if !isResourceSetSuitable(info.qos, resource, quantity, numaQuantity) {
				continue
			}

			resourceBitmask.Add(numaNode.NUMAID)
		}

		// non-native resources or ephemeral-storage may not expose NUMA affinity,
		// but since they are available at node level, this is fine
		if !hasNUMAAffinity && isHostLevelResource(resource) {
			continue
		}

		bitmask.And(resourceBitmask)
		if bitmask.IsEmpty() {
			return numaID, false, string(resource)
		}
	}
	// according to TopologyManager, the preferred NUMA affinity, is the narrowest one.
	// https://github.com/kubernetes/kubernetes/blob/v1.24.0-rc.1/pkg/kubelet/cm/topologymanager/policy.go#L155
	// in single-numa-node policy all resources should be allocated from a single NUMA,
	// which means that the lowest NUMA ID (with available resources) is the one to be selected by Kubelet.
	numaID = bitmask.GetBits()[0]

	// at least one NUMA node is available
	ret := !bitmask.IsEmpty()
	return numaID, ret, "generic"
}

func singleNUMAPodLevelHandler(pod *corev1.Pod, info *filterInfo) *api.Status {
	resources := getPodEffectiveRequest(pod)

	_, match, _ := resourcesAvailableInAnyNUMANodes(info, resources)
	if !match {
		return api.NewStatus(api.Unschedulable, "cannot align pod")
	}
	return nil
}

// Filter Now only single-numa-node supported
func (tm *TopologyMatch) Filter(_ api.CycleState, podInfo api.PodInfo, nodeInfo api.NodeInfo) *api.Status {
	if nodeInfo.Node() == nil {
		return api.NewStatus(api.Error, "node not found")
	}
	pod := podInfo.Pod()
	qos := getPodQOS(pod)
	if qos == corev1.PodQOSBestEffort && !resourcerequests.IncludeNonNative(pod) {
		return nil
	}

	nodeName := nodeInfo.Node().Name

	nodeTopology, info := tm.nrtCache.GetCachedNRTCopy(nodeName, pod)
	if !info.Fresh {
		return api.NewStatus(api.Unschedulable, "invalid node topology data")
	}
	if nodeTopology == nil {
		return nil
	}

	// upstream's preemption flow (getVictimPods) needs preemptionMode: Enabled, which is not ported.

	conf := nodeconfig.TopologyManagerFromNodeResourceTopology(nodeTopology)

	handler, _ := filterHandlerFromTopologyManager(conf)
	if handler == nil {
		return nil
	}

	numaNodes := createNUMANodeList(nodeTopology.Zones)
	fi := filterInfo{
		nodeName:        nodeName,
		node:            nodeInfo,
		topologyManager: conf,
		numaNodes:       numaNodes,
		qos:             qos,
	}
	// upstream then calls nrtCache.NodeMaybeOverReserved, a no-op of the Passthrough cache.
	return handler(pod, &fi)
}

func filterHandlerFromTopologyManager(conf nodeconfig.TopologyManager) (filterFn, string) {
	if conf.Policy != nodeconfig.SingleNumaNodeTopologyManagerPolicy {
		return nil, ""
	}
	if conf.Scope == nodeconfig.PodTopologyManagerScope {
		return singleNUMAPodLevelHandler, "pod"
	}
	if conf.Scope == nodeconfig.ContainerTopologyManagerScope {
		return singleNUMAContainerLevelHandler, "container"
	}
	return nil, "" // cannot happen
}
