package plugin

import (
	"reflect"
	"strings"
	"testing"
)

func TestDecodeArgsDefaults(t *testing.T) {
	for _, c := range []string{"", "  ", "{}"} {
		got, err := DecodeArgs([]byte(c))
		if err != nil {
			t.Fatalf("DecodeArgs(%q): %v", c, err)
		}
		if !reflect.DeepEqual(got, DefaultArgs()) {
			t.Errorf("DecodeArgs(%q) = %+v, want the defaults %+v", c, got, DefaultArgs())
		}
	}
}

func TestDecodeArgs(t *testing.T) {
	got, err := DecodeArgs([]byte(`{"podLabelKey": "app.kubernetes.io/part-of", "nodeLabelKey": "pool",
		"dedicatedOnlyAnnotation": "", "preferredScore": 80, "sharedScore": 20, "denyUnlabeled": true,
		"frozenTeams": ["a", "b-2"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Args{PodLabelKey: "app.kubernetes.io/part-of", NodeLabelKey: "pool", PreferredScore: 80,
		SharedScore: 20, DenyUnlabeled: true, FrozenTeams: []string{"a", "b-2"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// Absent fields keep their defaults.
	got, err = DecodeArgs([]byte(`{"frozenTeams": ["legacy"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want = DefaultArgs()
	want.FrozenTeams = []string{"legacy"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// Every error names the field (its JSON name) that is wrong.
func TestDecodeArgsErrors(t *testing.T) {
	for _, tc := range []struct {
		config string
		want   []string // substrings of the error
	}{
		{`{"preferedScore": 50}`, []string{`unknown field "preferedScore"`}},
		{`{"preferredScore": "high"}`, []string{"preferredScore", "int64"}},
		{`{"frozenTeams": "legacy"}`, []string{"frozenTeams", "[]string"}},
		{`{"denyUnlabeled": 1}`, []string{"denyUnlabeled", "bool"}},
		{`{"podLabelKey": ""}`, []string{"podLabelKey: required"}},
		{`{"nodeLabelKey": ""}`, []string{"nodeLabelKey: required"}},
		{`{"podLabelKey": "my team"}`, []string{`podLabelKey: invalid label key "my team"`}},
		{`{"nodeLabelKey": "Example.com/team"}`, []string{`nodeLabelKey: invalid label key "Example.com/team"`, "prefix"}},
		{`{"nodeLabelKey": "example.com/"}`, []string{"nodeLabelKey", "name part must not be empty"}},
		{`{"nodeLabelKey": "/team"}`, []string{"nodeLabelKey", "prefix"}},
		{`{"nodeLabelKey": "` + strings.Repeat("t", 64) + `"}`, []string{"nodeLabelKey", "63 characters"}},
		{`{"dedicatedOnlyAnnotation": "-x"}`, []string{`dedicatedOnlyAnnotation: invalid annotation key "-x"`}},
		{`{"preferredScore": 101}`, []string{"preferredScore: must be between 0 and 100, got 101"}},
		{`{"preferredScore": -1}`, []string{"preferredScore: must be between 0 and 100, got -1"}},
		{`{"sharedScore": -5}`, []string{"sharedScore: must be between 0 and preferredScore (100), got -5"}},
		{`{"preferredScore": 40, "sharedScore": 50}`, []string{"sharedScore: must be between 0 and preferredScore (40), got 50"}},
		{`{"frozenTeams": ["ok", ""]}`, []string{"frozenTeams[1]: must not be empty"}},
		{`{"frozenTeams": ["a", "b", "a"]}`, []string{`frozenTeams[2]: duplicate team "a"`}},
		{`{"frozenTeams": ["team x"]}`, []string{`frozenTeams[0]: invalid team "team x"`}},
		{`{"frozenTeams": ["a"]} {}`, []string{"unexpected data after the JSON object"}},
		{`{"frozenTeams": ["a"]`, []string{"unexpected EOF"}},
		{`[]`, []string{"cannot unmarshal array"}},
		// All problems at once, each with its field.
		{`{"podLabelKey": "", "preferredScore": 200, "frozenTeams": [""]}`,
			[]string{"podLabelKey: required; ", "preferredScore: must be between 0 and 100, got 200; ", "frozenTeams[0]: must not be empty"}},
	} {
		_, err := DecodeArgs([]byte(tc.config))
		if err == nil {
			t.Errorf("DecodeArgs(%s): no error", tc.config)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("DecodeArgs(%s) = %q, want it to contain %q", tc.config, err, w)
			}
		}
	}
}

func TestNewWrapsConfigErrors(t *testing.T) {
	_, err := New([]byte(`{"preferredScore": 101}`))
	want := "TeamPlacement: invalid guestConfig: preferredScore: must be between 0 and 100, got 101"
	if err == nil || err.Error() != want {
		t.Errorf("New: %v, want %q", err, want)
	}
}
