package plugin

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// This file holds the helpers the plugin imports from kube (k8s.io/kubernetes v1.37.2, which a guest
// cannot import) and from scheduler-plugins' pkg/util.

// getPodEffectiveRequest is scheduler-plugins' util.GetPodEffectiveRequest: the higher of the sum
// of the app containers' requests and the highest init container request, per resource, plus the
// pod overhead.
func getPodEffectiveRequest(pod *corev1.Pod) corev1.ResourceList {
	initResources := make(corev1.ResourceList)
	resources := make(corev1.ResourceList)

	for _, container := range pod.Spec.InitContainers {
		for name, quantity := range container.Resources.Requests {
			if q, ok := initResources[name]; ok && quantity.Cmp(q) <= 0 {
				continue
			}
			initResources[name] = quantity
		}
	}
	for _, container := range pod.Spec.Containers {
		for name, quantity := range container.Resources.Requests {
			if q, ok := resources[name]; ok {
				quantity.Add(q)
			}
			resources[name] = quantity
		}
	}
	for name, quantity := range initResources {
		if q, ok := resources[name]; ok && quantity.Cmp(q) <= 0 {
			continue
		}
		resources[name] = quantity
	}
	// Add pod overhead if present
	for name, quantity := range pod.Spec.Overhead {
		if q, ok := resources[name]; ok {
			quantity.Add(q)
		}
		resources[name] = quantity
	}
	return resources
}

// isSidecarInitContainer is scheduler-plugins' util.IsSidecarInitContainer.
func isSidecarInitContainer(container *corev1.Container) bool {
	return container.RestartPolicy != nil && *container.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// isNativeResource is kube's v1helper.IsNativeResource.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// isHugePageResourceName is kube's v1helper.IsHugePageResourceName.
func isHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// getPodQOS is kube's v1qos.GetPodQOS with the feature gates PodLevelResources and
// PodLevelResourcesFixKubeletQOSClass at their 1.37 defaults (both on).
func getPodQOS(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return computePodQOS(pod)
}

func computePodQOS(pod *corev1.Pod) corev1.PodQOSClass {
	// When pod-level resources are specified, we use them to determine QoS class.
	if isPodLevelResourcesSet(pod) {
		return requirementsQOS(pod.Spec.Resources)
	}
	var podQOS corev1.PodQOSClass
	containers := make([]*corev1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for i := range pod.Spec.InitContainers {
		containers = append(containers, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		containers = append(containers, &pod.Spec.Containers[i])
	}
	for _, container := range containers {
		containerQOS := requirementsQOS(&container.Resources)
		if containerQOS == corev1.PodQOSBurstable {
			return containerQOS // If any container is Burstable, we know the pod isn't BestEffort or Guaranteed
		} else if podQOS == "" {
			podQOS = containerQOS
		} else if podQOS != containerQOS {
			return corev1.PodQOSBurstable // If one container is BestEffort and another is Guaranteed, the pod is Burstable
		}
	}
	if podQOS == "" { // This can only happen if there aren't any containers (not possible in production).
		podQOS = corev1.PodQOSBestEffort
	}
	return podQOS
}

// isPodLevelResourcesSet is component-helpers' resource.IsPodLevelResourcesSet.
func isPodLevelResourcesSet(pod *corev1.Pod) bool {
	if pod.Spec.Resources == nil {
		return false
	}
	supported := func(name corev1.ResourceName) bool {
		return name == corev1.ResourceCPU || name == corev1.ResourceMemory || isHugePageResourceName(name)
	}
	for name := range pod.Spec.Resources.Requests {
		if supported(name) {
			return true
		}
	}
	for name := range pod.Spec.Resources.Limits {
		if supported(name) {
			return true
		}
	}
	return false
}

// requirementsQOS gets the QOSClass based on a single set of resource requirements.
func requirementsQOS(resources *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(resources.Requests) == 0 && len(resources.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var qos corev1.PodQOSClass
	// kube ranges over a set of cpu and memory; the result does not depend on the order.
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		resQOS := resourceQOS(resources, res)
		if resQOS == corev1.PodQOSBurstable {
			return resQOS
		} else if qos == "" {
			qos = resQOS
		} else if qos != resQOS {
			return corev1.PodQOSBurstable
		}
	}
	return qos
}

func resourceQOS(resources *corev1.ResourceRequirements, res corev1.ResourceName) corev1.PodQOSClass {
	req := resources.Requests[res]
	lim := resources.Limits[res]
	if !req.Equal(lim) {
		return corev1.PodQOSBurstable
	} else if req.IsZero() {
		return corev1.PodQOSBestEffort
	}
	return corev1.PodQOSGuaranteed
}
