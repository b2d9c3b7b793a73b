// Package plugin is NodeNumber: it favours nodes whose name ends in the same digit as the pod's
// name. Kept apart from package main so that go test runs it natively.
package plugin

import (
	"encoding/json"
	"fmt"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
	"github.com/wasmsched/wasmsched/sdk/go/klog"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "NodeNumber"

const preScoreStateKey = "PreScore" + Name

// NodeNumber scores 10 for a node whose name's last digit is the pod name's last digit, else 0;
// with reverse, the other way round. A pod whose name does not end in a digit scores 0 everywhere
// (10 with reverse).
type NodeNumber struct {
	reverse bool
}

type args struct {
	Reverse bool `json:"reverse"`
}

// New builds the plugin from its guestConfig, a JSON object such as {"reverse": true}.
func New(config []byte) (*NodeNumber, error) {
	var a args
	if len(config) > 0 {
		if err := json.Unmarshal(config, &a); err != nil {
			return nil, fmt.Errorf("NodeNumber: decoding guestConfig %q: %w", config, err)
		}
	}
	return &NodeNumber{reverse: a.Reverse}, nil
}

type preScoreState struct {
	podSuffix uint8
}

// EventsToRegister: a new node may be a better match.
func (pl *NodeNumber) EventsToRegister() []api.ClusterEvent {
	return []api.ClusterEvent{{Resource: api.Node, ActionType: api.Add}}
}

// PreScore remembers the digit the pod's name ends in and logs it. A pod whose name ends in no digit
// gets an event saying so: events are for what a user should see, so the plugin records one only in
// that case, not for every scheduling attempt (which would add a write to the API server per pod).
func (pl *NodeNumber) PreScore(state api.CycleState, podInfo api.PodInfo, nodes []api.NodeInfo) *api.Status {
	pod := podInfo.Pod()
	digit, ok := lastDigit(pod.Name)
	if !ok {
		klog.InfoS("pod name does not end in a digit", "pod", pod.Namespace+"/"+pod.Name)
		handle.GetEventRecorder().Eventf(pod, nil, "Normal", "NodeNumber", "PreScore",
			"no node favoured: the pod's name does not end in a digit")
		return nil
	}
	state.Write(preScoreStateKey, &preScoreState{podSuffix: digit})
	klog.InfoS("prescore", "pod", pod.Namespace+"/"+pod.Name, "digit", digit, "nodes", len(nodes))
	return nil
}

// Score gives 10 to a matching node, 0 to others (the reverse with reverse set).
func (pl *NodeNumber) Score(state api.CycleState, _ api.PodInfo, nodeInfo api.NodeInfo) (int64, *api.Status) {
	match := false
	if data, ok := state.Read(preScoreStateKey); ok {
		digit, ok := lastDigit(nodeInfo.Name())
		match = ok && digit == data.(*preScoreState).podSuffix
	}
	if pl.reverse {
		match = !match
	}
	if match {
		return 10, nil
	}
	return 0, nil
}

func lastDigit(s string) (uint8, bool) {
	if s == "" {
		return 0, false
	}
	c := s[len(s)-1]
	if c < '0' || c > '9' {
		return 0, false
	}
	return c - '0', true
}
