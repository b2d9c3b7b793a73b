package main

import (
	"encoding/json"
	"sort"

	fwk "k8s.io/kube-scheduler/framework"
)

// The JSON records of the differential contract (/work/prompts/diff-contract.md, "Result document").

// Result is one case's answer.
type Result struct {
	ID       json.RawMessage        `json:"id,omitempty"`
	Mode     string                 `json:"mode"`
	Attempts []*Attempt             `json:"attempts"`
	Final    map[string]*FinalState `json:"final,omitempty"`
}

// FinalState is a pending pod's end state after a run.
type FinalState struct {
	Node          *string `json:"node"`
	NominatedNode *string `json:"nominatedNode"`
}

// Attempt is one scheduling cycle of one pod.
type Attempt struct {
	Pod       string                      `json:"pod"`
	Profile   string                      `json:"profile"`
	PreFilter PreFilterRecord             `json:"preFilter"`
	Filter    map[string]any              `json:"filter"` // "ok" or *StatusRecord
	Scores    map[string]map[string]int64 `json:"scores"`
	Best      []string                    `json:"best"`
	Node      *string                     `json:"node"`
	Code      string                      `json:"code"`
	Message   string                      `json:"message"`
	// Run mode only; nil in cycle mode so that they are left out.
	NominatedNode        *string   `json:"nominatedNode,omitempty"`
	Victims              *[]string `json:"victims,omitempty"`
	PreemptionCandidates *[]string `json:"preemptionCandidates,omitempty"`
	// Set in run mode so that nominatedNode is printed even when null.
	runMode bool
}

// MarshalJSON prints nominatedNode as null in run mode (omitempty would drop it).
func (a *Attempt) MarshalJSON() ([]byte, error) {
	type plain Attempt
	if !a.runMode {
		return json.Marshal((*plain)(a))
	}
	return json.Marshal(struct {
		*plain
		NominatedNode *string `json:"nominatedNode"`
	}{(*plain)(a), a.NominatedNode})
}

// PreFilterRecord is the merged PreFilter status and the PreFilterResult's node names.
type PreFilterRecord struct {
	Code      string   `json:"code"`
	Plugin    string   `json:"plugin"`
	Reasons   []string `json:"reasons"`
	NodeNames []string `json:"nodeNames"`
}

// StatusRecord is a non-success status of one node.
type StatusRecord struct {
	Code    string   `json:"code"`
	Plugin  string   `json:"plugin"`
	Reasons []string `json:"reasons"`
}

func statusRecord(s *fwk.Status) *StatusRecord {
	reasons := s.Reasons()
	if reasons == nil {
		reasons = []string{}
	}
	return &StatusRecord{Code: s.Code().String(), Plugin: s.Plugin(), Reasons: reasons}
}

func strPtr(s string) *string { return &s }

// optionalName is nil for "", as the contract prints a missing node as null.
func optionalName(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func sortedCopy(in []string) []string {
	out := append([]string{}, in...)
	sort.Strings(out)
	return out
}
