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

// Package nodeconfig is scheduler-plugins' pkg/noderesourcetopology/nodeconfig: the kubelet's
// TopologyManager configuration as a NodeResourceTopology object states it.
package nodeconfig

import (
	"fmt"
	"strconv"

	topologyv1alpha2 "github.com/k8stopologyawareschedwg/noderesourcetopology-api/pkg/apis/topology/v1alpha2"
)

// The kubelet's TopologyManager scopes and policies (k8s.io/kubernetes/pkg/kubelet/apis/config).
const (
	ContainerTopologyManagerScope       = "container"
	PodTopologyManagerScope             = "pod"
	NoneTopologyManagerPolicy           = "none"
	BestEffortTopologyManagerPolicy     = "best-effort"
	RestrictedTopologyManagerPolicy     = "restricted"
	SingleNumaNodeTopologyManagerPolicy = "single-numa-node"
)

const (
	DefaultMaxNUMANodes = 8 // legacy setting and default value for TopologyManager. NOTE: kube doesn't expose this constant

	LimitNUMANodes = 1024 // basic sanitization, but we will likely need to bump soon enough
)

const (
	AttributeScope        = "topologyManagerScope"
	AttributePolicy       = "topologyManagerPolicy"
	AttributeMaxNUMANodes = "topologyManagerMaxNUMANodes"
)

func IsValidScope(scope string) bool {
	if scope == ContainerTopologyManagerScope || scope == PodTopologyManagerScope {
		return true
	}
	return false
}

func IsValidPolicy(policy string) bool {
	if policy == NoneTopologyManagerPolicy || policy == BestEffortTopologyManagerPolicy ||
		policy == RestrictedTopologyManagerPolicy || policy == SingleNumaNodeTopologyManagerPolicy {
		return true
	}
	return false
}

func IsValidMaxNUMANodes(value int) bool {
	// machines always report at least 1 NUMA node anyway, and furthermore the value is used in a division,
	// so we need to enforce 1 (not 0) as minimum
	// NOTE: there's no legit upper bound, so care must be taken to cap this value. But still, theoretically
	// 4096 NUMA nodes is a valid legal value.
	return value > 1
}

type TopologyManager struct {
	Scope        string
	Policy       string
	MaxNUMANodes int
}

func TopologyManagerDefaults() TopologyManager {
	return TopologyManager{
		Scope:        ContainerTopologyManagerScope,
		Policy:       NoneTopologyManagerPolicy,
		MaxNUMANodes: DefaultMaxNUMANodes,
	}
}

func TopologyManagerFromNodeResourceTopology(nodeTopology *topologyv1alpha2.NodeResourceTopology) TopologyManager {
	conf := TopologyManagerDefaults()
	cfg := &conf // shortcut
	// Backward compatibility (v1alpha2 and previous). Deprecated, will be removed when the NRT API moves to v1beta1.
	cfg.updateFromPolicies(nodeTopology.Name, nodeTopology.TopologyPolicies)
	// preferred new configuration source (v1alpha2 and onwards)
	cfg.updateFromAttributes(nodeTopology.Attributes)
	return conf
}

func (conf TopologyManager) String() string {
	return fmt.Sprintf("policy=%s scope=%s maxNUMANodes=%d", conf.Policy, conf.Scope, conf.MaxNUMANodes)
}

func (conf TopologyManager) Equal(other TopologyManager) bool {
	if conf.Scope != other.Scope {
		return false
	}
	if conf.Policy != other.Policy {
		return false
	}
	return conf.MaxNUMANodes == other.MaxNUMANodes
}

func (conf *TopologyManager) updateFromAttributes(attrs topologyv1alpha2.AttributeList) {
	for _, attr := range attrs {
		if attr.Name == AttributeScope && IsValidScope(attr.Value) {
			conf.Scope = attr.Value
			continue
		}
		if attr.Name == AttributePolicy && IsValidPolicy(attr.Value) {
			conf.Policy = attr.Value
			continue
		}
		if attr.Name == AttributeMaxNUMANodes {
			if val, err := strconv.Atoi(attr.Value); err == nil && IsValidMaxNUMANodes(val) {
				conf.MaxNUMANodes = clampMaxNUMANodes(val)
				continue
			}
		}
	}
}

func clampMaxNUMANodes(val int) int {
	if val > LimitNUMANodes {
		val = LimitNUMANodes
	}
	return val
}

func (conf *TopologyManager) updateFromPolicies(_ string, topologyPolicies []string) {
	if len(topologyPolicies) == 0 {
		return
	}
	// upstream logs that topologyPolicies is deprecated (use the attributes) and ignores extra policies.
	policyName := topologyv1alpha2.TopologyManagerPolicy(topologyPolicies[0])

	switch policyName {
	case topologyv1alpha2.SingleNUMANodePodLevel:
		conf.Policy = SingleNumaNodeTopologyManagerPolicy
		conf.Scope = PodTopologyManagerScope
	case topologyv1alpha2.SingleNUMANodeContainerLevel:
		conf.Policy = SingleNumaNodeTopologyManagerPolicy
		conf.Scope = ContainerTopologyManagerScope
	case topologyv1alpha2.BestEffortPodLevel:
		conf.Policy = BestEffortTopologyManagerPolicy
		conf.Scope = PodTopologyManagerScope
	case topologyv1alpha2.BestEffortContainerLevel:
		conf.Policy = BestEffortTopologyManagerPolicy
		conf.Scope = ContainerTopologyManagerScope
	case topologyv1alpha2.RestrictedPodLevel:
		conf.Policy = RestrictedTopologyManagerPolicy
		conf.Scope = PodTopologyManagerScope
	case topologyv1alpha2.RestrictedContainerLevel:
		conf.Policy = RestrictedTopologyManagerPolicy
		conf.Scope = ContainerTopologyManagerScope
	}
}
