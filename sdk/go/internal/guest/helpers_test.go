//go:build !wasip1

package guest

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

// setPlugin registers p for one test, bypassing Set's link checks (the calls assert interfaces).
func setPlugin(t *testing.T, p api.Plugin) {
	t.Helper()
	prev := Plugin
	register(p)
	t.Cleanup(func() { register(prev) })
}

// setLinked replaces the linked export packages for one test.
func setLinked(t *testing.T, names ...string) {
	t.Helper()
	prev := linked
	linked = map[string]bool{}
	for _, n := range names {
		linked[n] = true
	}
	t.Cleanup(func() { linked = prev })
}

// resetCaches forgets every decoded host value, so a test sees its own host's bytes decoded.
func resetCaches(t *testing.T) {
	t.Helper()
	currentPodCache = decoded[corev1.Pod]{}
	targetPodCache = decoded[corev1.Pod]{}
	nodeCache = map[string]*decoded[corev1.Node]{}
	nodeListCache = decoded[corev1.NodeList]{}
	imageCache = map[string]*decoded[map[string]api.ImageStateSummary]{}
	mirror, clones, call, cycleState = newMirror(), nil, callContext{}, api.NewCycleState()
	resetScratch(t)
}

// resetScratch gives the test the scratch buffer a fresh guest starts with.
func resetScratch(t *testing.T) {
	t.Helper()
	scratch = make([]byte, minScratch)
	t.Cleanup(func() { scratch = make([]byte, minScratch) })
}

// install installs h as the host, with fresh caches.
func install(t *testing.T, h *hosttest.Host) *hosttest.Host {
	t.Helper()
	resetCaches(t)
	return hosttest.Install(t, h)
}

func newPod(ns, name, uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}}
}

func newNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"name": name}}}
}

// bigPod is a pod whose protobuf encoding exceeds the 2048-byte scratch buffer.
func bigPod(name string) *corev1.Pod {
	p := newPod("default", name, "uid-"+name)
	p.Labels = map[string]string{}
	for i := range 100 {
		p.Labels[fmt.Sprintf("label-%03d", i)] = fmt.Sprintf("value-%03d-%040d", i, i)
	}
	return p
}

// fakePlugin implements every extension point; each method calls its func when set.
type fakePlugin struct {
	events     []api.ClusterEvent
	preFilter  func(api.CycleState, api.PodInfo) ([]string, *api.Status)
	addPod     func(api.CycleState, api.PodInfo, api.PodInfo, api.NodeInfo) *api.Status
	removePod  func(api.CycleState, api.PodInfo, api.PodInfo, api.NodeInfo) *api.Status
	filter     func(api.CycleState, api.PodInfo, api.NodeInfo) *api.Status
	postFilter func(api.CycleState, api.PodInfo, api.NodeToStatus) (string, api.NominatingMode, *api.Status)
	preScore   func(api.CycleState, api.PodInfo, []api.NodeInfo) *api.Status
	score      func(api.CycleState, api.PodInfo, api.NodeInfo) (int64, *api.Status)
	normalize  func(api.CycleState, api.PodInfo, []api.NodeScore) *api.Status
	reserve    func(api.CycleState, api.PodInfo, string) *api.Status
	unreserve  func(api.CycleState, api.PodInfo, string)
	permit     func(api.CycleState, api.PodInfo, string) (*api.Status, time.Duration)
	preBind    func(api.CycleState, api.PodInfo, string) *api.Status
	bind       func(api.CycleState, api.PodInfo, string) *api.Status
	postBind   func(api.CycleState, api.PodInfo, string)
	preEnqueue func(api.PodInfo) *api.Status
	sortKey    func(api.QueuedPodInfo) api.SortKey
}

func (f *fakePlugin) PreEnqueue(p api.PodInfo) *api.Status {
	if f.preEnqueue == nil {
		return nil
	}
	return f.preEnqueue(p)
}

func (f *fakePlugin) SortKey(p api.QueuedPodInfo) api.SortKey {
	if f.sortKey == nil {
		return nil
	}
	return f.sortKey(p)
}

func (f *fakePlugin) EventsToRegister() []api.ClusterEvent { return f.events }

func (f *fakePlugin) PreFilter(s api.CycleState, p api.PodInfo) ([]string, *api.Status) {
	if f.preFilter == nil {
		return nil, nil
	}
	return f.preFilter(s, p)
}

func (f *fakePlugin) AddPod(s api.CycleState, p, t api.PodInfo, n api.NodeInfo) *api.Status {
	if f.addPod == nil {
		return nil
	}
	return f.addPod(s, p, t, n)
}

func (f *fakePlugin) RemovePod(s api.CycleState, p, t api.PodInfo, n api.NodeInfo) *api.Status {
	if f.removePod == nil {
		return nil
	}
	return f.removePod(s, p, t, n)
}

func (f *fakePlugin) Filter(s api.CycleState, p api.PodInfo, n api.NodeInfo) *api.Status {
	if f.filter == nil {
		return nil
	}
	return f.filter(s, p, n)
}

func (f *fakePlugin) PostFilter(s api.CycleState, p api.PodInfo, m api.NodeToStatus) (string, api.NominatingMode,
	*api.Status) {
	if f.postFilter == nil {
		return "", api.ModeNoop, nil
	}
	return f.postFilter(s, p, m)
}

func (f *fakePlugin) PreScore(s api.CycleState, p api.PodInfo, n []api.NodeInfo) *api.Status {
	if f.preScore == nil {
		return nil
	}
	return f.preScore(s, p, n)
}

func (f *fakePlugin) Score(s api.CycleState, p api.PodInfo, n api.NodeInfo) (int64, *api.Status) {
	if f.score == nil {
		return 0, nil
	}
	return f.score(s, p, n)
}

func (f *fakePlugin) NormalizeScore(s api.CycleState, p api.PodInfo, scores []api.NodeScore) *api.Status {
	if f.normalize == nil {
		return nil
	}
	return f.normalize(s, p, scores)
}

func (f *fakePlugin) Reserve(s api.CycleState, p api.PodInfo, n string) *api.Status {
	if f.reserve == nil {
		return nil
	}
	return f.reserve(s, p, n)
}

func (f *fakePlugin) Unreserve(s api.CycleState, p api.PodInfo, n string) {
	if f.unreserve != nil {
		f.unreserve(s, p, n)
	}
}

func (f *fakePlugin) Permit(s api.CycleState, p api.PodInfo, n string) (*api.Status, time.Duration) {
	if f.permit == nil {
		return nil, 0
	}
	return f.permit(s, p, n)
}

func (f *fakePlugin) PreBind(s api.CycleState, p api.PodInfo, n string) *api.Status {
	if f.preBind == nil {
		return nil
	}
	return f.preBind(s, p, n)
}

func (f *fakePlugin) Bind(s api.CycleState, p api.PodInfo, n string) *api.Status {
	if f.bind == nil {
		return nil
	}
	return f.bind(s, p, n)
}

func (f *fakePlugin) PostBind(s api.CycleState, p api.PodInfo, n string) {
	if f.postBind != nil {
		f.postBind(s, p, n)
	}
}

// mustPanic runs f and returns the panic value's text; the test fails if f does not panic.
func mustPanic(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("expected a panic")
		}
		msg = fmt.Sprint(r)
	}()
	f()
	return ""
}
