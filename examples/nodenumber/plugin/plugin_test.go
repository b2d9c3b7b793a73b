//go:build !wasip1

package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

func pod(name string) api.PodInfo {
	return api.PodOf(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("u-" + name)}})
}

func node(name string) api.NodeInfo {
	return api.NodeInfoOf(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil)
}

func TestNewDecodesReverse(t *testing.T) {
	for config, want := range map[string]bool{"": false, `{}`: false, `{"reverse": true}`: true, `{"reverse": false}`: false} {
		p, err := New([]byte(config))
		if err != nil {
			t.Fatalf("%q: %v", config, err)
		}
		if p.reverse != want {
			t.Errorf("%q: reverse = %v, want %v", config, p.reverse, want)
		}
	}
	if _, err := New([]byte(`{"reverse": "yes"}`)); err == nil || !strings.Contains(err.Error(), "NodeNumber: decoding guestConfig") {
		t.Fatalf("bad config: err = %v", err)
	}
}

// score runs PreScore then Score, as one cycle does.
func score(t *testing.T, p *NodeNumber, podName, nodeName string) int64 {
	t.Helper()
	state := api.NewCycleState()
	pi := pod(podName)
	if s := p.PreScore(state, pi, []api.NodeInfo{node(nodeName)}); !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	got, s := p.Score(state, pi, node(nodeName))
	if !s.IsSuccess() {
		t.Fatalf("Score: %v", s)
	}
	return got
}

func TestScore(t *testing.T) {
	hosttest.Install(t, &hosttest.Host{})
	forward, reverse := &NodeNumber{}, &NodeNumber{reverse: true}
	for _, tc := range []struct {
		pod, node     string
		want, reverse int64
	}{
		{"web-4", "node-04", 10, 0},
		{"web-4", "node-05", 0, 10},
		{"web-4", "node-14", 10, 0}, // only the last digit counts
		{"web-4", "node-x", 0, 10},
		{"web", "node-04", 0, 10}, // no digit: no match anywhere
	} {
		if got := score(t, forward, tc.pod, tc.node); got != tc.want {
			t.Errorf("%s on %s: %d, want %d", tc.pod, tc.node, got, tc.want)
		}
		if got := score(t, reverse, tc.pod, tc.node); got != tc.reverse {
			t.Errorf("reverse: %s on %s: %d, want %d", tc.pod, tc.node, got, tc.reverse)
		}
	}
}

func TestScoreWithoutPreScoreStateIsNoMatch(t *testing.T) {
	p := &NodeNumber{}
	if got, _ := p.Score(api.NewCycleState(), pod("web-4"), node("node-04")); got != 0 {
		t.Fatalf("Score without PreScore = %d, want 0", got)
	}
}

func TestPreScoreLogsTheDigit(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{})
	p := &NodeNumber{}
	if s := p.PreScore(api.NewCycleState(), pod("cache-1"), []api.NodeInfo{node("a"), node("b")}); !s.IsSuccess() {
		t.Fatal(s)
	}
	if len(h.Logged) != 1 || h.Logged[0].Msg != "prescore" ||
		string(h.Logged[0].KVs) != "pod\x00shop/cache-1\x00digit\x001\x00nodes\x002\x00" {
		t.Fatalf("logged %+v", h.Logged)
	}
	if len(h.Events) != 0 {
		t.Fatalf("%d events for a pod whose name ends in a digit, want none", len(h.Events))
	}
}

func TestPreScoreRecordsAnEventForANameWithoutDigit(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{})
	p := &NodeNumber{}
	if s := p.PreScore(api.NewCycleState(), pod("scratch"), []api.NodeInfo{node("a")}); !s.IsSuccess() {
		t.Fatal(s)
	}
	if len(h.Events) != 1 {
		t.Fatalf("events: %d", len(h.Events))
	}
	var e struct {
		RegardingReference              struct{ Kind, Name, Namespace string }
		Eventtype, Reason, Action, Note string
	}
	if err := json.Unmarshal(h.Events[0], &e); err != nil {
		t.Fatal(err)
	}
	if e.RegardingReference.Kind != "Pod" || e.RegardingReference.Name != "scratch" || e.Reason != "NodeNumber" ||
		e.Eventtype != "Normal" || e.Note != "no node favoured: the pod's name does not end in a digit" {
		t.Fatalf("event %+v", e)
	}
}

func TestEventsToRegister(t *testing.T) {
	got := (&NodeNumber{}).EventsToRegister()
	if len(got) != 1 || got[0] != (api.ClusterEvent{Resource: api.Node, ActionType: api.Add}) {
		t.Fatalf("EventsToRegister = %v", got)
	}
}
