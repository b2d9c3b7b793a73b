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
	"k8s.io/apimachinery/pkg/api/resource"
)

type NUMANode struct {
	NUMAID    int
	Resources corev1.ResourceList
	Costs     map[int]int
}

func (n *NUMANode) WithCosts(costs map[int]int) *NUMANode {
	n.Costs = costs
	return n
}

type NUMANodeList []NUMANode

func isHostLevelResource(resource corev1.ResourceName) bool {
	// host-level resources are resources which *may* not be bound to NUMA nodes.
	// A Key example is generic [ephemeral] storage which doesn't expose NUMA affinity.
	if resource == corev1.ResourceEphemeralStorage {
		return true
	}
	if resource == corev1.ResourceStorage {
		return true
	}
	if !isNativeResource(resource) {
		return true
	}
	return false
}

func isNUMAAffineResource(resource corev1.ResourceName) bool {
	// NUMA-affine resources are resources which are required to be bound to NUMA nodes.
	// A Key example is CPU and memory, which must expose NUMA affinity.
	if resource == corev1.ResourceCPU {
		return true
	}
	if resource == corev1.ResourceMemory {
		return true
	}
	if isHugePageResourceName(resource) {
		return true
	}
	// Devices are *expected* to expose NUMA Affinity, but they are not *required* to do so.
	// We can't tell for sure, so we default to "no".
	return false
}

func isResourceSetSuitable(qos corev1.PodQOSClass, resource corev1.ResourceName, quantity, numaQuantity resource.Quantity) bool {
	if qos != corev1.PodQOSGuaranteed && isNUMAAffineResource(resource) {
		return true
	}
	return numaQuantity.Cmp(quantity) >= 0
}

// subtractResourcesFromNUMANodeList finds the correct NUMA ID's resources and always subtract them from `nodes` in-place.
func subtractResourcesFromNUMANodeList(nodes NUMANodeList, numaID int, qos corev1.PodQOSClass, containerRes corev1.ResourceList) error {
	for _, node := range nodes {
		if node.NUMAID != numaID {
			continue
		}

		for resName, resQty := range containerRes {
			isAffine := isNUMAAffineResource(resName)
			if qos != corev1.PodQOSGuaranteed && isAffine {
				continue
			}
			if resQty.IsZero() {
				continue
			}
			nResQ, ok := node.Resources[resName]
			if !ok {
				continue
			}
			nodeResQty := nResQ.DeepCopy()
			nodeResQty.Sub(resQty)
			if nodeResQty.Sign() < 0 {
				return fmt.Errorf("resource %q request %s exceeds NUMA %d availability %s", string(resName), resQty.String(), numaID, nResQ.String())
			}
			node.Resources[resName] = nodeResQty
		}
	}
	return nil
}
