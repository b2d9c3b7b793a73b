/*
Copyright The Kubernetes Authors.

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

// Package resourcerequests is the part of scheduler-plugins' pkg/noderesourcetopology/resourcerequests
// Filter uses (IncludeNonNative); AreExclusiveForPod serves the OverReserve cache, not ported.
package resourcerequests

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

func IncludeNonNative(pod *corev1.Pod) bool {
	for _, initContainer := range pod.Spec.InitContainers {
		for resource := range initContainer.Resources.Requests {
			if !isNativeResource(resource) {
				return true
			}
		}
	}
	for _, container := range pod.Spec.Containers {
		for resource := range container.Resources.Requests {
			if !isNativeResource(resource) {
				return true
			}
		}
	}
	return false
}

// isNativeResource is kube's v1helper.IsNativeResource.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}
