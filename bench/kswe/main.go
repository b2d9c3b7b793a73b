// Command kswe measures the per-call cost of kube-scheduler-wasm-extension's Go host (wazero) on a
// guest .wasm, for bench/abi.py, which runs the same guests on wasmsched in the same run.
//
// The plugin is built as KSWE's own benchmarks build it (wasm.NewFromConfig with a file:// GuestURL)
// on a handle whose snapshot holds the nodes, so the guest's node lookups resolve. The objects
// mirror bench/abi.py's: nodes node-0..node-N-1 (32 cpu, 256Gi, 110 pods), pod default/pod-8.
//
// Calls (-call): filter (one Filter on one node), filter-batch (Filter on each of the N nodes, per
// node), score (one Score after PreScore), score-batch (Score on each node, per node), enqueue
// (EventsToRegister), cycle (PreFilter, Filter xN, PreScore, Score xN: each the guest implements).
//
//	kswe -guest G.wasm -call filter [-nodes 1000] [-rounds 7] [-round-ms 200]   # one JSON summary
//	kswe -guest G.wasm -call filter -serve                                     # one round per stdin line
//
// With -serve it prints {"ready":true,"iters":N} once calibrated, then one {"ns":X} line per line
// read from stdin (X: ns per call, or per node for the batch calls), so a driver can interleave its
// own rounds with these in one process.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	wasm "sigs.k8s.io/kube-scheduler-wasm-extension/scheduler/plugin"
	"sigs.k8s.io/kube-scheduler-wasm-extension/scheduler/test"
)

var calls = map[string]bool{
	"filter": true, "filter-batch": true, "score": true, "score-batch": true, "enqueue": true, "cycle": true,
}

type summary struct {
	Call     string    `json:"call"`
	Guest    string    `json:"guest"`
	Nodes    int       `json:"nodes"`
	Iters    int       `json:"iters"`
	Rounds   int       `json:"rounds"`
	MinNs    float64   `json:"min_ns"`
	MedianNs float64   `json:"median_ns"`
	Ns       []float64 `json:"ns"`
}

func main() {
	guest := flag.String("guest", "", "path to the guest .wasm")
	call := flag.String("call", "", "filter, filter-batch, score, score-batch, enqueue or cycle")
	nodes := flag.Int("nodes", 1000, "nodes in the snapshot (and in the batch and cycle calls)")
	rounds := flag.Int("rounds", 7, "rounds (without -serve)")
	roundMs := flag.Int("round-ms", 200, "target duration of one round, in milliseconds")
	guestConfig := flag.String("guest-config", "", "the plugin's guestConfig")
	serve := flag.Bool("serve", false, "run one round per line read from stdin, print one JSON line each")
	flag.Parse()
	if err := run(*guest, *call, *nodes, *rounds, *roundMs, *guestConfig, *serve); err != nil {
		fmt.Fprintln(os.Stderr, "kswe:", err)
		os.Exit(1)
	}
}

func run(guest, call string, nodes, rounds, roundMs int, guestConfig string, serve bool) error {
	if guest == "" {
		return fmt.Errorf("-guest is required")
	}
	if !calls[call] {
		return fmt.Errorf("-call %q: want one of filter, filter-batch, score, score-batch, enqueue, cycle", call)
	}
	if nodes < 9 {
		return fmt.Errorf("-nodes %d: at least 9 (score and filter use node-8)", nodes)
	}
	abs, err := filepath.Abs(guest)
	if err != nil {
		return err
	}
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)

	ctx := context.Background()
	nodeObjs := makeNodes(nodes)
	snapshot := cache.NewSnapshot(nil, nodeObjs)
	handle := &test.FakeHandle{SharedLister: snapshot, Recorder: &test.FakeRecorder{}}
	pl, err := wasm.NewFromConfig(ctx, "wasm", wasm.PluginConfig{GuestURL: "file://" + abs, GuestConfig: guestConfig}, handle)
	if err != nil {
		return err
	}
	defer pl.(io.Closer).Close()

	pod := makePod()
	op, err := newOp(ctx, pl, call, pod, snapshot.NodeInfos())
	if err != nil {
		return err
	}
	iters, err := calibrate(op, time.Duration(roundMs)*time.Millisecond)
	if err != nil {
		return err
	}
	perUnit := 1.0
	if call == "filter-batch" || call == "score-batch" {
		perUnit = float64(nodes)
	}
	round := func() (float64, error) {
		start := time.Now()
		for i := 0; i < iters; i++ {
			if err := op(); err != nil {
				return 0, err
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(iters) / perUnit, nil
	}

	out := json.NewEncoder(os.Stdout)
	if serve {
		if err := out.Encode(map[string]any{"ready": true, "iters": iters}); err != nil {
			return err
		}
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			ns, err := round()
			if err != nil {
				return err
			}
			if err := out.Encode(map[string]float64{"ns": ns}); err != nil {
				return err
			}
		}
		return in.Err()
	}
	s := summary{Call: call, Guest: abs, Nodes: nodes, Iters: iters, Rounds: rounds}
	for r := 0; r < rounds; r++ {
		ns, err := round()
		if err != nil {
			return err
		}
		s.Ns = append(s.Ns, ns)
	}
	sorted := append([]float64(nil), s.Ns...)
	sort.Float64s(sorted)
	s.MinNs = sorted[0]
	if n := len(sorted); n%2 == 1 {
		s.MedianNs = sorted[n/2]
	} else {
		s.MedianNs = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return out.Encode(s)
}

// newOp prepares the cycle state the measured call expects (PreFilter pins the pod's guest, PreScore
// writes what Score reads) and returns one operation. The framework asserts interfaces, as KSWE
// masks the plugin's by what the guest exports; a call the guest does not implement is an error.
func newOp(ctx context.Context, pl framework.Plugin, call string, pod *v1.Pod,
	snapshot framework.NodeInfoLister) (func() error, error) {
	infos, err := snapshot.List()
	if err != nil {
		return nil, err
	}
	state := framework.NewCycleState()
	preFilter, _ := pl.(framework.PreFilterPlugin)
	filter, _ := pl.(framework.FilterPlugin)
	preScore, _ := pl.(framework.PreScorePlugin)
	score, _ := pl.(framework.ScorePlugin)
	node, err := snapshot.Get("node-8")
	if err != nil {
		return nil, err
	}
	check := func(what string, s *framework.Status) error {
		if s.Code() == framework.Error {
			return fmt.Errorf("%s: %v", what, s.AsError())
		}
		return nil
	}
	prepare := func() error {
		if preFilter != nil {
			_, s := preFilter.PreFilter(ctx, state, pod)
			if err := check("PreFilter", s); err != nil {
				return err
			}
		}
		if preScore != nil {
			return check("PreScore", preScore.PreScore(ctx, state, pod, infos))
		}
		return nil
	}
	need := func(ok bool, ext string) error {
		if !ok {
			return fmt.Errorf("-call %s: the guest does not implement %s", call, ext)
		}
		return prepare()
	}
	switch call {
	case "filter":
		return func() error { return check("Filter", filter.Filter(ctx, state, pod, node)) }, need(filter != nil, "Filter")
	case "filter-batch":
		return func() error {
			for _, ni := range infos {
				if err := check("Filter", filter.Filter(ctx, state, pod, ni)); err != nil {
					return err
				}
			}
			return nil
		}, need(filter != nil, "Filter")
	case "score":
		return func() error {
			_, s := score.Score(ctx, state, pod, node)
			return check("Score", s)
		}, need(score != nil, "Score")
	case "score-batch":
		return func() error {
			for _, ni := range infos {
				_, s := score.Score(ctx, state, pod, ni)
				if err := check("Score", s); err != nil {
					return err
				}
			}
			return nil
		}, need(score != nil, "Score")
	case "enqueue":
		enq, ok := pl.(framework.EnqueueExtensions)
		return func() error {
			_, err := enq.EventsToRegister(ctx)
			return err
		}, need(ok, "EventsToRegister")
	default: // cycle
		return func() error { return cycle(ctx, pod, infos, preFilter, filter, preScore, score) }, nil
	}
}

func cycle(ctx context.Context, pod *v1.Pod, infos []*framework.NodeInfo, preFilter framework.PreFilterPlugin,
	filter framework.FilterPlugin, preScore framework.PreScorePlugin, score framework.ScorePlugin) error {
	state := framework.NewCycleState()
	if preFilter != nil {
		if _, s := preFilter.PreFilter(ctx, state, pod); s.Code() == framework.Error {
			return s.AsError()
		}
	}
	if filter != nil {
		for _, ni := range infos {
			if s := filter.Filter(ctx, state, pod, ni); s.Code() == framework.Error {
				return s.AsError()
			}
		}
	}
	if preScore != nil {
		if s := preScore.PreScore(ctx, state, pod, infos); s.Code() == framework.Error {
			return s.AsError()
		}
	}
	if score != nil {
		for _, ni := range infos {
			if _, s := score.Score(ctx, state, pod, ni); s.Code() == framework.Error {
				return s.AsError()
			}
		}
	}
	return nil
}

// calibrate runs op for about a quarter of a round (warming the guest up) and returns how many
// iterations fill one round.
func calibrate(op func() error, round time.Duration) (int, error) {
	n := 0
	start := time.Now()
	for time.Since(start) < round/4 || n < 3 {
		if err := op(); err != nil {
			return 0, err
		}
		n++
	}
	per := time.Since(start) / time.Duration(n)
	if per <= 0 {
		per = 1
	}
	return max(1, int(round/per)), nil
}

func makeNodes(n int) []*v1.Node {
	out := make([]*v1.Node, n)
	for i := range out {
		name := fmt.Sprintf("node-%d", i)
		res := v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("32"),
			v1.ResourceMemory: resource.MustParse("256Gi"),
			v1.ResourcePods:   resource.MustParse("110"),
		}
		out[i] = &v1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, UID: types.UID("node-uid-" + name),
				Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
			},
			Status: v1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy()},
		}
	}
	return out
}

func makePod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-8", Namespace: "default", UID: "uid-pod-8"},
		Spec: v1.PodSpec{
			SchedulerName: "default-scheduler",
			Containers: []v1.Container{{
				Name: "app", Image: "registry.example/app:1",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse("100m"),
					v1.ResourceMemory: resource.MustParse("500Mi"),
				}},
			}},
		},
	}
}
