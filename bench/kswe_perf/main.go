// kswe-perf: kube-scheduler-wasm-extension's host (KSWE's scheduler/plugin on wazero, inside kube-scheduler
// v1.33.4, the version KSWE pins) on scheduler_perf's SchedulingBasic, the same workload and the same JSON as
// bench/kube: with -guest G.wasm the guest is added to the default profile as the wasm plugin "NodeNumber"
// (registered as KSWE's internal/e2e/scheduler_perf registers it, through the out-of-tree registry), without
// it the default profile alone. bench/scheduler_perf.py builds it against a KSWE checkout (the replace
// directives below are rewritten to the checkout given by --kswe) and runs both to get the time NodeNumber
// adds per pod on KSWE's host.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	wasm "sigs.k8s.io/kube-scheduler-wasm-extension/scheduler/plugin"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

const namespace = "default"

// result is the JSON printed on stdout; bench/scheduler_perf.py reads the same fields from wasmsched's worker.
type result struct {
	Host            string                    `json:"host"`
	Version         string                    `json:"version"`
	NodeNumber      bool                      `json:"nodenumber"`
	Nodes           int                       `json:"nodes"`
	Pods            int                       `json:"pods"`
	GoMaxProcs      int                       `json:"gomaxprocs"`
	Bound           int64                     `json:"bound"`
	SetupSeconds    float64                   `json:"setup_seconds"`
	Seconds         float64                   `json:"seconds"`
	CreateSeconds   float64                   `json:"create_seconds"`
	CPUSeconds      float64                   `json:"cpu_seconds"`
	PodsPerSecond   float64                   `json:"pods_per_second"`
	AttemptMs       latency                   `json:"attempt_latency_ms"`
	ExtensionPoints map[string]extensionPoint `json:"extension_points"`
	PeakRSSMB       float64                   `json:"peak_rss_mb"`
}

type latency struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

// extensionPoint sums framework_extension_point_duration_seconds over its status labels.
type extensionPoint struct {
	Count        uint64  `json:"count"`
	TotalSeconds float64 `json:"total_seconds"`
	MeanUs       float64 `json:"mean_us"`
}

func main() {
	nodes := flag.Int("nodes", 500, "nodes to create before the pods")
	guest := flag.String("guest", "", "a guest .wasm to add to the default profile as the wasm plugin NodeNumber")
	logSeverity := flag.Int("log-severity", -1, "the guest's logSeverity arg (-1: not set, KSWE's default)")
	pods := flag.Int("pods", 1000, "pods to create and schedule (the measured ones)")
	procs := flag.Int("procs", 0, "GOMAXPROCS (0: the environment's)")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up when the pods are not bound by then")
	flag.Parse()
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	silenceKlog()
	res, err := run(*nodes, *pods, *guest, *logSeverity, *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-kube:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}

func silenceKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
}

func run(numNodes, numPods int, guest string, logSeverity int, timeout time.Duration) (*result, error) {
	setupStart := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The fake tracker's watchers panic when their buffer fills; the pods are created faster than the
	// informers drain them, so the buffer holds every event of the run (a real API server's watch cache queues them).
	watch.DefaultChanSize = int32(numNodes + 2*numPods + 1000)
	client, tr := newClientset()
	for i := 0; i < numNodes; i++ {
		if err := tr.Add(makeNode(i)); err != nil {
			return nil, fmt.Errorf("adding node %d: %w", i, err)
		}
	}
	lat := &latencies{start: map[types.UID]time.Time{}}
	var bound atomic.Int64
	done := make(chan struct{})
	client.PrependReactor("create", "pods", bindReactor(tr, lat, &bound, int64(numPods), done))

	informers := scheduler.NewInformerFactory(client, 0)
	recorders := func(string) events.EventRecorder { return &events.FakeRecorder{} }
	opts, err := guestOptions(guest, logSeverity)
	if err != nil {
		return nil, err
	}
	sched, err := scheduler.New(ctx, client, informers, nil, profile.RecorderFactory(recorders), opts...)
	if err != nil {
		return nil, fmt.Errorf("building the scheduler: %w", err)
	}
	next := sched.NextPod
	sched.NextPod = func(logger klog.Logger) (*framework.QueuedPodInfo, error) {
		pi, err := next(logger)
		if pi != nil && pi.Pod != nil {
			lat.begin(pi.Pod.UID)
		}
		return pi, err
	}
	informers.Start(ctx.Done())
	for typ, synced := range informers.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return nil, fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return nil, fmt.Errorf("waiting for the event handlers: %w", err)
	}
	go sched.Run(ctx)
	setup := time.Since(setupStart)

	cpuStart := cpuSeconds()
	start := time.Now()
	for j := 0; j < numPods; j++ {
		if _, err := client.CoreV1().Pods(namespace).Create(ctx, makePod(j), metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("creating pod %d: %w", j, err)
		}
	}
	created := time.Since(start)
	select {
	case <-done:
	case <-time.After(timeout):
		return nil, fmt.Errorf("%d of %d pods bound after %v", bound.Load(), numPods, timeout)
	}
	elapsed := time.Since(start)
	cpu := cpuSeconds() - cpuStart

	eps, err := gatherExtensionPoints()
	if err != nil {
		return nil, err
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return &result{
		Host: "kswe", Version: "v1.33.4", NodeNumber: guest != "", Nodes: numNodes, Pods: numPods,
		GoMaxProcs: runtime.GOMAXPROCS(0), Bound: bound.Load(),
		SetupSeconds: setup.Seconds(), Seconds: elapsed.Seconds(), CreateSeconds: created.Seconds(), CPUSeconds: cpu,
		PodsPerSecond: float64(numPods) / elapsed.Seconds(),
		AttemptMs:     lat.summary(), ExtensionPoints: eps,
		PeakRSSMB: float64(ru.Maxrss) / 1024, // Linux reports KiB
	}, nil
}

// guestOptions: none for the default profile; with a guest, the default profile plus the wasm plugin,
// configured as KSWE's sched-config-wasm-only.yaml does (multiPoint, weight 1), and KSWE's factory registered.
// logSeverity >= 0 sets the plugin's logSeverity (the guest's klog lines are formatted by klog, whose
// output this program discards).
func guestOptions(guest string, logSeverity int) ([]scheduler.Option, error) {
	if guest == "" {
		return nil, nil
	}
	abs, err := filepath.Abs(guest)
	if err != nil {
		return nil, err
	}
	doc := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: NodeNumber
  pluginConfig:
  - name: NodeNumber
    args:
      guestURL: %q
`, "file://"+abs)
	if logSeverity >= 0 {
		doc += fmt.Sprintf("      logSeverity: %d\n", logSeverity)
	}
	obj, gvk, err := schedscheme.Codecs.UniversalDecoder().Decode([]byte(doc), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding the scheduler configuration: %w", err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("scheduler configuration decoded as %T", obj)
	}
	return []scheduler.Option{
		scheduler.WithComponentConfigVersion(gvk.GroupVersion().String()),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithFrameworkOutOfTreeRegistry(frameworkruntime.Registry{"NodeNumber": wasm.PluginFactory("NodeNumber")}),
	}, nil
}

// cpuSeconds is the process's user + system CPU time so far: unlike wall time, it hardly moves when
// other processes compete for the cores.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// latencies pairs each pod's leaving the queue with its binding being applied.
type latencies struct {
	mu    sync.Mutex
	start map[types.UID]time.Time
	ms    []float64
}

func (l *latencies) begin(uid types.UID) {
	l.mu.Lock()
	l.start[uid] = time.Now()
	l.mu.Unlock()
}

func (l *latencies) end(uid types.UID) {
	now := time.Now()
	l.mu.Lock()
	if t, ok := l.start[uid]; ok {
		l.ms = append(l.ms, float64(now.Sub(t).Nanoseconds())/1e6)
		delete(l.start, uid)
	}
	l.mu.Unlock()
}

func (l *latencies) summary() latency {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ms) == 0 {
		return latency{}
	}
	s := append([]float64(nil), l.ms...)
	sort.Float64s(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	return latency{P50: percentile(s, 50), P99: percentile(s, 99), Mean: sum / float64(len(s))}
}

// percentile is the nearest-rank percentile of sorted values (bench/scheduler_perf.py uses the same).
func percentile(sorted []float64, p int) float64 {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

func gatherExtensionPoints() (map[string]extensionPoint, error) {
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return nil, fmt.Errorf("gathering metrics: %w", err)
	}
	out := map[string]extensionPoint{}
	for _, mf := range families {
		if mf.GetName() != "scheduler_framework_extension_point_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			point := label(m, "extension_point")
			ep := out[point]
			ep.Count += m.GetHistogram().GetSampleCount()
			ep.TotalSeconds += m.GetHistogram().GetSampleSum()
			out[point] = ep
		}
	}
	for k, ep := range out {
		if ep.Count > 0 {
			ep.MeanUs = ep.TotalSeconds / float64(ep.Count) * 1e6
		}
		out[k] = ep
	}
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// makeNode is scheduler_perf's node template at the size: 32 cpu, 256Gi, 110 pods, Ready.
func makeNode(i int) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	name := fmt.Sprintf("node-%05d", i)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-uid-" + strconv.Itoa(i)),
			Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Phase:      corev1.NodeRunning,
		},
	}
}

// makePod is scheduler_perf's pod-default.yaml: one pause container requesting (and limited to) 100m / 500Mi.
func makePod(j int) *corev1.Pod {
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100m"),
		corev1.ResourceMemory: resource.MustParse("500Mi"),
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%06d", j), Namespace: namespace,
			UID: types.UID("pod-uid-" + strconv.Itoa(j))},
		Spec: corev1.PodSpec{
			SchedulerName: corev1.DefaultSchedulerName,
			Containers: []corev1.Container{{
				Name: "pause", Image: "registry.k8s.io/pause:3.10.2",
				Ports:     []corev1.ContainerPort{{ContainerPort: 80}},
				Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl},
			}},
		},
	}
}

// bindReactor applies a pods/binding as the API server does (spec.nodeName is set) and closes done when
// the last of the measured pods is bound.
func bindReactor(tr *tracker, lat *latencies, bound *atomic.Int64, want int64, done chan struct{}) clienttesting.ReactionFunc {
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	return func(action clienttesting.Action) (bool, k8sruntime.Object, error) {
		create, ok := action.(clienttesting.CreateAction)
		if !ok || action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		binding, ok := create.GetObject().(*corev1.Binding)
		if !ok {
			return true, nil, fmt.Errorf("binding of unexpected type %T", create.GetObject())
		}
		obj, err := tr.Get(gvr, binding.Namespace, binding.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*corev1.Pod).DeepCopy()
		if pod.Spec.NodeName != "" {
			return true, nil, fmt.Errorf("pod %s/%s is already assigned to node %q", pod.Namespace, pod.Name, pod.Spec.NodeName)
		}
		pod.Spec.NodeName = binding.Target.Name
		if err := tr.Update(gvr, pod, pod.Namespace); err != nil {
			return true, nil, err
		}
		lat.end(pod.UID)
		if bound.Add(1) == want {
			close(done)
		}
		return true, binding, nil
	}
}

// tracker stamps resourceVersions, as the API server does: the scheduler ignores a pod update whose
// resourceVersion equals the old one (a resync).
type tracker struct {
	clienttesting.ObjectTracker
	seq atomic.Int64
}

func (t *tracker) stamp(obj k8sruntime.Object) (k8sruntime.Object, error) {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion(strconv.FormatInt(t.seq.Add(1), 10))
	return obj, nil
}

func (t *tracker) Add(obj k8sruntime.Object) error {
	obj, err := t.stamp(obj)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Add(obj)
}

func (t *tracker) Create(gvr schema.GroupVersionResource, obj k8sruntime.Object, ns string, opts ...metav1.CreateOptions) error {
	obj, err := t.stamp(obj)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Create(gvr, obj, ns, opts...)
}

func (t *tracker) Update(gvr schema.GroupVersionResource, obj k8sruntime.Object, ns string, opts ...metav1.UpdateOptions) error {
	obj, err := t.stamp(obj)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Update(gvr, obj, ns, opts...)
}

func (t *tracker) Patch(gvr schema.GroupVersionResource, obj k8sruntime.Object, ns string, opts ...metav1.PatchOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	m.SetResourceVersion(strconv.FormatInt(t.seq.Add(1), 10))
	return t.ObjectTracker.Patch(gvr, obj, ns, opts...)
}

// newClientset is fake.NewSimpleClientset with the tracker above in front of the object store.
func newClientset() (*fake.Clientset, *tracker) {
	cs := fake.NewSimpleClientset()
	t := &tracker{ObjectTracker: clienttesting.NewObjectTracker(clientscheme.Scheme, clientscheme.Codecs.UniversalDecoder())}
	cs.PrependReactor("*", "*", clienttesting.ObjectReaction(t))
	cs.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(clienttesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := t.Watch(action.GetResource(), action.GetNamespace(), opts)
		if err != nil {
			return false, nil, err
		}
		return true, w, nil
	})
	return cs, t
}
