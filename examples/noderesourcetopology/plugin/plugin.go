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

// Package plugin is the NodeResourceTopologyMatch plugin of kubernetes-sigs/scheduler-plugins
// (pkg/noderesourcetopology at commit 903da7df82cb, which pins noderesourcetopology-api v0.1.2) on the Go
// guest SDK's ABI v2: Filter for the single-numa-node TopologyManager policy (container and pod
// scope) and Score with the LeastAllocated strategy. The files follow upstream's (plugin.go,
// filter.go, score.go, least_allocated.go, numaresources.go, pluginhelpers.go, nodeconfig/,
// resourcerequests/) function by function; what differs:
//
//   - the NodeResourceTopology objects are read through handle.Objects (docs/abi.md §14.2), so
//     the plugin's args must watch noderesourcetopologies.v1alpha2.topology.node.k8s.io; upstream
//     reads them with a controller-runtime client. Only upstream's default cache, Passthrough
//     (cacheResyncPeriodSeconds unset or 0), is ported: it trusts the objects' `available` values;
//     the OverReserve and DiscardReserved caches, their Reserve/Unreserve/PostBind, foreign-pod
//     detection and the NUMA-aware preemption (preemptionMode: Enabled) are not;
//   - only the LeastAllocated scoring strategy is ported (MostAllocated, BalancedAllocation and
//     LeastNUMANodes fail New);
//   - upstream logs through logr at verbosity levels; a guest's klog has no levels, so the
//     V-level logs are left out (the Filter reasons are upstream's);
//   - kube's helpers the plugin imports (v1qos.GetPodQOS, v1helper.IsNativeResource, the
//     TopologyManager bitmask, pkg/util of scheduler-plugins) are ported in util.go and bitmask.go.
package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	topologyapi "github.com/k8stopologyawareschedwg/noderesourcetopology-api/pkg/apis/topology"

	"github.com/wasmsched/wasmsched/examples/noderesourcetopology/plugin/nodeconfig"
	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/framework"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
)

const (
	// Name is the name of the plugin used in the plugin registry and configurations.
	Name = "NodeResourceTopologyMatch"
)

// NodeResourceTopologies is the resource the plugin reads through handle.Objects; the plugin's
// args.watch must name it (docs/abi.md §14.2).
var NodeResourceTopologies = schema.GroupVersionResource{
	Group: topologyapi.GroupName, Version: "v1alpha2", Resource: "noderesourcetopologies"}

type filterInfo struct {
	nodeName        string // shortcut, used very often
	node            api.NodeInfo
	topologyManager nodeconfig.TopologyManager
	numaNodes       NUMANodeList
	qos             corev1.PodQOSClass
}

type filterFn func(*corev1.Pod, *filterInfo) *api.Status

type scoreInfo struct {
	topologyManager nodeconfig.TopologyManager
	qos             corev1.PodQOSClass
	numaNodes       NUMANodeList
}

type scoringFn func(*corev1.Pod, *scoreInfo) (int64, *api.Status)

// TopologyMatch plugin which run simplified version of TopologyManager's admit handler
type TopologyMatch struct {
	resourceToWeightMap resourceToWeightMap
	nrtCache            passthrough
	scoreStrategyFunc   scoreStrategyFn
	scoreStrategyType   ScoringStrategyType
}

var (
	_ api.FilterPlugin            = &TopologyMatch{}
	_ api.ScorePlugin             = &TopologyMatch{}
	_ framework.EnqueueExtensions = &TopologyMatch{}
)

// ScoringStrategyType is upstream's apiconfig.ScoringStrategyType.
type ScoringStrategyType string

const (
	MostAllocated      ScoringStrategyType = "MostAllocated"
	BalancedAllocation ScoringStrategyType = "BalancedAllocation"
	LeastAllocated     ScoringStrategyType = "LeastAllocated"
	LeastNUMANodes     ScoringStrategyType = "LeastNUMANodes"
)

// ResourceSpec is kube's schedulerconfigv1.ResourceSpec: a resource and its weight.
type ResourceSpec struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}

// ScoringStrategy is upstream's ScoringStrategy.
type ScoringStrategy struct {
	Type      ScoringStrategyType `json:"type,omitempty"`
	Resources []ResourceSpec      `json:"resources,omitempty"`
}

// Args are upstream's NodeResourceTopologyMatchArgs (apis/config/v1, the same JSON names), from
// the guestConfig JSON. Cache and the cache knobs are accepted only with the values of the
// Passthrough cache, the one ported.
type Args struct {
	ScoringStrategy          *ScoringStrategy `json:"scoringStrategy,omitempty"`
	CacheResyncPeriodSeconds *int64           `json:"cacheResyncPeriodSeconds,omitempty"`
	DiscardReservedNodes     bool             `json:"discardReservedNodes,omitempty"`
	Cache                    json.RawMessage  `json:"cache,omitempty"`
	PreemptionMode           *string          `json:"preemptionMode,omitempty"`
}

var defaultResourceSpec = []ResourceSpec{
	{Name: string(corev1.ResourceCPU), Weight: 1},
	{Name: string(corev1.ResourceMemory), Weight: 1},
}

// setDefaults is upstream's SetDefaults_NodeResourceTopologyMatchArgs (the parts read here).
func setDefaults(obj *Args) {
	if obj.ScoringStrategy == nil {
		obj.ScoringStrategy = &ScoringStrategy{
			Type:      LeastAllocated,
			Resources: defaultResourceSpec,
		}
	}
	if len(obj.ScoringStrategy.Resources) == 0 {
		// If no resources specified, use the default set.
		obj.ScoringStrategy.Resources = append(obj.ScoringStrategy.Resources, defaultResourceSpec...)
	}
	for i := range obj.ScoringStrategy.Resources {
		if obj.ScoringStrategy.Resources[i].Weight == 0 {
			obj.ScoringStrategy.Resources[i].Weight = 1
		}
	}
	if obj.PreemptionMode == nil {
		disabled := "Disabled"
		obj.PreemptionMode = &disabled
	}
}

// validate is upstream's ValidateNodeResourceTopologyMatchArgs, with its texts, then what this port
// refuses because it is not ported.
func validate(args *Args) error {
	switch args.ScoringStrategy.Type {
	case MostAllocated, BalancedAllocation, LeastAllocated, LeastNUMANodes:
	default:
		return fmt.Errorf("scoringStrategy.type: Invalid value: %q: invalid ScoringStrategyType", args.ScoringStrategy.Type)
	}
	switch *args.PreemptionMode {
	case "Disabled":
	case "Enabled":
		return fmt.Errorf("preemptionMode: Enabled is not ported (only Disabled, upstream's default)")
	default:
		return fmt.Errorf("preemptionMode: Invalid value: %q: invalid PreemptionMode", *args.PreemptionMode)
	}
	if args.ScoringStrategy.Type != LeastAllocated {
		return fmt.Errorf("scoringStrategy.type: %s is not ported (only LeastAllocated)", args.ScoringStrategy.Type)
	}
	if args.DiscardReservedNodes {
		return fmt.Errorf("discardReservedNodes: the DiscardReserved cache is not ported (only the Passthrough cache)")
	}
	if args.CacheResyncPeriodSeconds != nil && *args.CacheResyncPeriodSeconds > 0 {
		return fmt.Errorf("cacheResyncPeriodSeconds: the OverReserve cache is not ported (only the Passthrough cache: leave it unset or 0)")
	}
	return nil
}

// New decodes the args (upstream's defaults and validation) and builds the plugin.
func New(config []byte) (*TopologyMatch, error) {
	var tcfg Args
	if len(bytes.TrimSpace(config)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(config))
		dec.DisallowUnknownFields() // kube-scheduler decodes plugin args strictly
		if err := dec.Decode(&tcfg); err != nil {
			return nil, fmt.Errorf("%s: decoding guestConfig %q: %w", Name, config, err)
		}
	}
	setDefaults(&tcfg)
	if err := validate(&tcfg); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}

	resToWeightMap := make(resourceToWeightMap)
	for _, resource := range tcfg.ScoringStrategy.Resources {
		resToWeightMap[corev1.ResourceName(resource.Name)] = resource.Weight
	}

	strategy, err := getScoringStrategyFunction(tcfg.ScoringStrategy.Type)
	if err != nil {
		return nil, err
	}

	return &TopologyMatch{
		resourceToWeightMap: resToWeightMap,
		nrtCache:            passthrough{lister: handle.Objects(NodeResourceTopologies)},
		scoreStrategyFunc:   strategy,
		scoreStrategyType:   tcfg.ScoringStrategy.Type,
	}, nil
}

// EventsToRegister returns the possible events that may make a Pod
// failed by this plugin schedulable.
// NOTE: if in-place-update (KEP 1287) gets implemented, then PodUpdate event
// should be registered for this plugin since a Pod update may free up resources
// that make other Pods schedulable.
func (tm *TopologyMatch) EventsToRegister() ([]framework.ClusterEventWithHint, error) {
	// To register a custom event, follow the naming convention at:
	// https://github.com/kubernetes/kubernetes/pull/101394
	nrtGVK := fmt.Sprintf("noderesourcetopologies.v1alpha2.%v", topologyapi.GroupName)
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable}},
		{Event: framework.ClusterEvent{Resource: framework.EventResource(nrtGVK), ActionType: framework.Add | framework.Update}},
	}, nil
}
