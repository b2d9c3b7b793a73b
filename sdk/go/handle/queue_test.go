//go:build !wasip1

package handle

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

func TestIterateOverWaitingPods(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{PluginName: "Coscheduling"})
	a, b := newPod("ns", "a", "ua"), newPod("ns", "b", "ub")
	h.Waiting = []hosttest.WaitingPod{hosttest.Waiting(t, a, "Coscheduling"), hosttest.Waiting(t, b, "Coscheduling")}
	var seen []string
	IterateOverWaitingPods(func(w api.WaitingPod) {
		seen = append(seen, w.GetPod().Name+":"+strings.Join(w.GetPendingPlugins(), "+"))
		if w.GetPod().Name == "a" {
			w.Allow("Coscheduling")
		} else {
			w.Reject("Coscheduling", "gang rejected")
		}
	})
	if strings.Join(seen, ",") != "a:Coscheduling,b:Coscheduling" {
		t.Fatalf("seen %v", seen)
	}
	if len(h.Waiting) != 0 || len(h.WaitingCalls) != 2 || h.WaitingCalls[1].Message != "gang rejected" {
		t.Fatalf("host %+v %+v", h.Waiting, h.WaitingCalls)
	}
	// The v1 API keeps working beside it.
	h.WaitingPods = map[string][]byte{"ua": hosttest.PodBytes(t, a)}
	if w := GetWaitingPod("ua"); w == nil || w.GetPod().Name != "a" || !RejectWaitingPod("ua") {
		t.Fatal("v1 waiting pod API")
	}
}

func TestPodsLister(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{})
	p1, p2, p3 := newPod("ns", "p1", "1"), newPod("ns", "p2", "2"), newPod("other", "p3", "3")
	p1.Labels = map[string]string{"pg": "g1"}
	p3.Labels = map[string]string{"pg": "g1"}
	hosttest.SetPods(t, h, p3, p2, p1)
	sel := labels.SelectorFromSet(labels.Set{"pg": "g1"})
	all, err := Pods().List(sel)
	if err != nil || len(all) != 2 || all[0].Name != "p1" || all[1].Name != "p3" {
		t.Fatalf("List: %v %v", all, err)
	}
	inNS, _ := Pods().Pods("ns").List(nil)
	if len(inNS) != 2 || inNS[0].Name != "p1" || inNS[1].Name != "p2" {
		t.Fatalf("Pods(ns).List: %v", inNS)
	}
	if none, _ := Pods().List(labels.Nothing()); none != nil {
		t.Fatalf("Nothing() listed %v", none)
	}
	if p, err := Pods().Pods("ns").Get("p2"); err != nil || p.Name != "p2" {
		t.Fatalf("Get: %v %v", p, err)
	}
	if _, err := Pods().Pods("ns").Get("zz"); !apierrors.IsNotFound(err) {
		t.Fatalf("Get(zz): %v", err)
	}
}

func TestActivateAndNow(t *testing.T) {
	h := hosttest.Install(t, &hosttest.Host{Now: time.Unix(100, 5)})
	Activate(map[string]*corev1.Pod{"ns/b": nil, "ns/a": newPod("ns", "a", "")})
	Activate(map[string]*corev1.Pod{})
	if strings.Join(h.Activated, ",") != "ns/a,ns/b" || h.Calls["handle.activate"] != 1 {
		t.Fatalf("activated %v (%d calls)", h.Activated, h.Calls["handle.activate"])
	}
	if !Now().Equal(time.Unix(100, 5)) {
		t.Fatalf("Now %v", Now())
	}
	h.Now = h.Now.Add(time.Minute)
	if !Now().Equal(time.Unix(160, 5)) {
		t.Fatalf("Now after a minute %v", Now())
	}
}
