package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Args is the plugin's configuration: pluginConfig args.guestConfig, a JSON object. Absent fields
// keep the defaults of DefaultArgs.
type Args struct {
	// PodLabelKey is the pod label naming the pod's team.
	PodLabelKey string `json:"podLabelKey"`
	// NodeLabelKey is the node label naming the team a node is dedicated to; nodes without it are
	// shared by everyone.
	NodeLabelKey string `json:"nodeLabelKey"`
	// DedicatedOnlyAnnotation is a pod annotation: with the value "true" the pod may run only on
	// its team's dedicated nodes, never on shared ones. "" turns the feature off.
	DedicatedOnlyAnnotation string `json:"dedicatedOnlyAnnotation"`
	// PreferredScore is the score of a node dedicated to the pod's team, 0..100.
	PreferredScore int64 `json:"preferredScore"`
	// SharedScore is the score of a shared node for a pod that has a team, 0..PreferredScore.
	SharedScore int64 `json:"sharedScore"`
	// DenyUnlabeled rejects pods without the team label.
	DenyUnlabeled bool `json:"denyUnlabeled"`
	// FrozenTeams are teams under a change freeze: their pods are evaluated, but Permit does not
	// let them bind.
	FrozenTeams []string `json:"frozenTeams"`
}

// DefaultArgs are the values of fields the guestConfig leaves out.
func DefaultArgs() Args {
	return Args{
		PodLabelKey:             "team",
		NodeLabelKey:            "example.com/team",
		DedicatedOnlyAnnotation: "example.com/dedicated-only",
		PreferredScore:          100,
		SharedScore:             0,
	}
}

// DecodeArgs decodes and validates a guestConfig. Empty config means DefaultArgs. Errors name the
// field: unknown fields and wrong types come from encoding/json ("json: unknown field \"x\"",
// "... Go struct field Args.preferredScore of type int64"), invalid values from Validate.
func DecodeArgs(config []byte) (Args, error) {
	args := DefaultArgs()
	config = bytes.TrimSpace(config)
	if len(config) == 0 {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return Args{}, err
	}
	if dec.More() {
		return Args{}, errors.New("unexpected data after the JSON object")
	}
	return args, args.Validate()
}

// Validate checks every field and reports all problems, each prefixed with its field's JSON name.
func (a Args) Validate() error {
	var errs []string
	field := func(name, format string, args ...any) {
		errs = append(errs, name+": "+fmt.Sprintf(format, args...))
	}
	if a.PodLabelKey == "" {
		field("podLabelKey", "required")
	} else if msg := qualifiedNameError(a.PodLabelKey); msg != "" {
		field("podLabelKey", "invalid label key %q: %s", a.PodLabelKey, msg)
	}
	if a.NodeLabelKey == "" {
		field("nodeLabelKey", "required")
	} else if msg := qualifiedNameError(a.NodeLabelKey); msg != "" {
		field("nodeLabelKey", "invalid label key %q: %s", a.NodeLabelKey, msg)
	}
	if a.DedicatedOnlyAnnotation != "" {
		if msg := qualifiedNameError(a.DedicatedOnlyAnnotation); msg != "" {
			field("dedicatedOnlyAnnotation", "invalid annotation key %q: %s", a.DedicatedOnlyAnnotation, msg)
		}
	}
	if a.PreferredScore < 0 || a.PreferredScore > 100 {
		field("preferredScore", "must be between 0 and 100, got %d", a.PreferredScore)
	}
	if a.SharedScore < 0 || a.SharedScore > a.PreferredScore {
		field("sharedScore", "must be between 0 and preferredScore (%d), got %d", a.PreferredScore, a.SharedScore)
	}
	seen := map[string]bool{}
	for i, team := range a.FrozenTeams {
		name := fmt.Sprintf("frozenTeams[%d]", i)
		switch {
		case team == "":
			field(name, "must not be empty")
		case labelValueError(team) != "":
			field(name, "invalid team %q: %s", team, labelValueError(team))
		case seen[team]:
			field(name, "duplicate team %q", team)
		}
		seen[team] = true
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// qualifiedNameError checks a label or annotation key: an optional DNS-subdomain prefix and "/",
// then a name of at most 63 characters (Kubernetes' IsQualifiedName). "" means valid.
func qualifiedNameError(key string) string {
	name := key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		prefix := key[:i]
		name = key[i+1:]
		if prefix == "" || len(prefix) > 253 {
			return "the prefix must be a DNS subdomain of 1 to 253 characters"
		}
		for _, label := range strings.Split(prefix, ".") {
			if !isDNSLabel(label) {
				return "the prefix must be a lowercase DNS subdomain (e.g. example.com)"
			}
		}
	}
	if name == "" {
		return "the name part must not be empty"
	}
	return labelValueError(name)
}

// labelValueError checks a label value (also the name part of a key): at most 63 characters,
// alphanumerics, '-', '_' and '.', beginning and ending with an alphanumeric. "" means valid.
func labelValueError(v string) string {
	if len(v) > 63 {
		return "must be no more than 63 characters"
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || i == len(v)-1 || c != '-' && c != '_' && c != '.') {
			return "must consist of alphanumerics, '-', '_' or '.', and begin and end with an alphanumeric"
		}
	}
	return ""
}

func isDNSLabel(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}
