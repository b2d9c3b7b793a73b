package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/scheduler"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	clocktesting "k8s.io/utils/clock/testing"
)

const (
	// maxAttemptsPerPod bounds a run (diff-contract.md, "Modes"): it stops once a pod has had this many.
	maxAttemptsPerPod = 20
	// settleTimeout bounds every wait for the scheduler to settle; reaching it is an error, not a result.
	settleTimeout = 10 * time.Second
	// clockStart is the fake clock's time when a case starts (only differences matter).
	clockStart = "2024-01-01T00:00:00Z"
)

// oracle is one case: a fake cluster, kube's scheduler on it, and what its cycles decided.
type oracle struct {
	mode      string
	c         *Case
	ctx       context.Context
	cancel    context.CancelFunc
	counts    *counts
	client    *fake.Clientset
	tracker   *tracker
	informers informers.SharedInformerFactory
	sched     *scheduler.Scheduler
	snapshot  *internalcache.Snapshot
	clock     *clocktesting.FakeClock

	schedulePod    func(ctx context.Context, fw framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (scheduler.ScheduleResult, error)
	failureHandler scheduler.FailureHandlerFn

	mu        sync.Mutex
	attempts  []*Attempt
	current   *cycleRecord               // the scheduling cycle in progress (run mode)
	byPod     map[types.UID]*cycleRecord // the last cycle of each pod, for binding failures
	perPod    map[string]int
	bindEnded bool
}

// cycleRecord is an attempt plus what is learnt about it after SchedulePod returns.
type cycleRecord struct {
	attempt    *Attempt
	scheduled  bool // SchedulePod chose a node, so a binding cycle will follow unless a later step fails
	failed     bool // the failure handler ran for the scheduling cycle
	victims    []string
	candidates []string // preemption tie set, when SelectCandidate compared several
}

// newOracle builds the cluster and the scheduler. In cycle mode every object is in the cluster; in
// run mode the pending pods are left out, to be created one by one.
func newOracle(c *Case, mode string) (*oracle, error) {
	start, _ := time.Parse(time.RFC3339, clockStart)
	o := &oracle{
		mode:   mode,
		c:      c,
		counts: newCounts(),
		clock:  clocktesting.NewFakeClock(start),
		byPod:  map[types.UID]*cycleRecord{},
		perPod: map[string]int{},
	}
	o.ctx, o.cancel = context.WithCancel(context.Background())
	ok := false
	defer func() {
		if !ok {
			o.cancel()
		}
	}()
	o.client, o.tracker = newClientset(o.counts)
	tr := o.tracker
	for _, obj := range c.Objects {
		if (mode == "run" && isPending(obj)) || isTerminal(obj) {
			continue
		}
		if err := tr.Add(obj); err != nil {
			return nil, fmt.Errorf("adding %s: %w", objectName(obj), err)
		}
	}
	o.client.PrependReactor("create", "pods", o.bindReactor(tr))
	o.client.PrependReactor("delete", "pods", o.deleteRecorder)

	o.informers = newInformerFactory(o.client, o.counts)
	o.snapshot = internalcache.NewEmptySnapshot()
	recorders := func(string) events.EventRecorderLogger { return &events.FakeRecorder{} }
	cfg := c.Config
	var err error
	o.sched, err = scheduler.New(o.ctx, o.client, o.informers, nil, profile.RecorderFactory(recorders),
		scheduler.WithComponentConfigVersion(cfg.TypeMeta.APIVersion),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		// One worker: the parallel loops (Filter, preemption's dry run) then visit nodes in order, so
		// where they stop early does not depend on goroutine timing.
		scheduler.WithParallelism(1),
		scheduler.WithClock(o.clock),
		scheduler.WithNodeInfoSnapshot(o.snapshot),
	)
	if err != nil {
		return nil, fmt.Errorf("building the scheduler: %w", err)
	}
	o.schedulePod = o.sched.SchedulePod
	o.sched.SchedulePod = o.wrappedSchedulePod
	o.failureHandler = o.sched.FailureHandler
	o.sched.FailureHandler = o.wrappedFailureHandler
	for name, fw := range o.sched.Profiles {
		if err := o.installTieBreaker(fw); err != nil {
			return nil, fmt.Errorf("profile %s: %w", name, err)
		}
	}

	o.informers.Start(o.ctx.Done())
	for typ, synced := range o.informers.WaitForCacheSync(o.ctx.Done()) {
		if !synced {
			return nil, fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	if err := o.counts.waitQuiet(settleTimeout, nil); err != nil {
		return nil, err
	}
	// Quiet includes every counted handler's HasSynced, as kube-scheduler's start-up waits for its
	// handlers (below): an informer's own HasSynced does not wait for them, and an initial-list event
	// handled late, while the first pod is in flight (a PersistentVolume's Add, say), would send
	// that pod to backoffQ for one attempt more. WaitForHandlersSync then returns at its first look
	// unless a handler of an informer that is not counted is still behind (it polls every 100 ms).
	syncCtx, cancel := context.WithTimeout(o.ctx, settleTimeout)
	defer cancel()
	if err := o.sched.WaitForHandlersSync(syncCtx); err != nil {
		return nil, fmt.Errorf("waiting for the scheduler's event handlers to sync: %w", err)
	}
	ok = true
	return o, nil
}

func (o *oracle) close() {
	o.cancel()
	o.sched.SchedulingQueue.Close()
	o.informers.Shutdown()
}

func isPending(obj runtime.Object) bool {
	pod, ok := obj.(*corev1.Pod)
	return ok && pod.Spec.NodeName == "" && !isTerminal(obj)
}

// isTerminal: kube-scheduler's pod informer lists only pods that are neither Succeeded nor Failed
// (a field selector the fake clientset does not apply), so such pods are left out of the cluster.
func isTerminal(obj runtime.Object) bool {
	pod, ok := obj.(*corev1.Pod)
	return ok && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed)
}

func objectName(obj runtime.Object) string {
	if m, ok := obj.(metav1.Object); ok {
		return fmt.Sprintf("%T %s/%s", obj, m.GetNamespace(), m.GetName())
	}
	return fmt.Sprintf("%T", obj)
}

func podKey(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// bindReactor applies a pods/binding as the API server does: spec.nodeName is set. The pod also gets
// status.startTime (the fake clock's now), as a kubelet that starts it at once would write: preemption
// orders victims of equal priority by start time, and reads time.Now() for pods without one.
func (o *oracle) bindReactor(tr *tracker) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(clienttesting.CreateAction)
		if !ok || action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		binding, ok := create.GetObject().(*corev1.Binding)
		if !ok {
			return true, nil, fmt.Errorf("binding of unexpected type %T", create.GetObject())
		}
		gvr := corev1.SchemeGroupVersion.WithResource("pods")
		obj, err := tr.Get(gvr, binding.Namespace, binding.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*corev1.Pod).DeepCopy()
		if pod.Spec.NodeName != "" {
			return true, nil, fmt.Errorf("pod %s/%s is already assigned to node %q", pod.Namespace, pod.Name, pod.Spec.NodeName)
		}
		pod.Spec.NodeName = binding.Target.Name
		// The API server clears the nomination when it binds (ClearingNominatedNodeNameAfterBinding, on in 1.37).
		pod.Status.NominatedNodeName = ""
		started := metav1.NewTime(o.clock.Now())
		pod.Status.StartTime = &started
		if err := tr.Update(gvr, pod, pod.Namespace); err != nil {
			return true, nil, err
		}
		return true, binding, nil
	}
}

// deleteRecorder notes the pods the cycle in progress deletes (preemption victims); the delete itself
// is left to the object reactor.
func (o *oracle) deleteRecorder(action clienttesting.Action) (bool, runtime.Object, error) {
	del, ok := action.(clienttesting.DeleteAction)
	if !ok || action.GetSubresource() != "" {
		return false, nil, nil
	}
	o.mu.Lock()
	if o.current != nil {
		o.current.victims = append(o.current.victims, del.GetNamespace()+"/"+del.GetName())
	}
	o.mu.Unlock()
	return false, nil, nil
}

// wrappedSchedulePod runs kube's SchedulePod (its verdict and FitError are kube's own), then records the
// contract's explanation computed with the framework's own runners, and chooses min(best) among
// equally good nodes where kube would choose at random.
func (o *oracle) wrappedSchedulePod(ctx context.Context, fw framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
	result, err := o.schedulePod(ctx, fw, state, podInfo)
	a, exErr := explain(ctx, fw, o.snapshot, podInfo.Pod)
	if exErr != nil {
		return result, fmt.Errorf("oracle: explaining %s: %w", podKey(podInfo.Pod), exErr)
	}
	a.runMode = o.mode == "run"
	rec := &cycleRecord{attempt: a}
	if err == nil {
		if len(a.Best) > 0 && a.Best[0] != result.SuggestedHost {
			// Without score plugins kube's walk stops at its first feasible node, from a rotating start,
			// so it may not have filtered the node chosen here. Plugins keep per-node results of Filter
			// in the cycle state for Reserve (DynamicResources' allocation, VolumeBinding's bindings):
			// filter the chosen node in kube's own cycle state, as a walk starting elsewhere would have.
			ni, getErr := o.snapshot.GetNodeInPlacement(a.Best[0])
			if getErr != nil {
				return result, fmt.Errorf("oracle: node %s: %w", a.Best[0], getErr)
			}
			if s := fw.RunFilterPluginsWithNominatedPods(ctx, state, podInfo.Pod, ni); !s.IsSuccess() {
				return result, fmt.Errorf("oracle: %s passed Filter in the explanation but not in kube's cycle: %v", a.Best[0], s.AsError())
			}
			result.SuggestedHost = a.Best[0]
		}
		a.Node = strPtr(result.SuggestedHost)
		a.Code = fwk.Success.String()
		rec.scheduled = true
	} else {
		status := cycleStatus(err)
		a.Code = status.Code().String()
		a.Message = truncateMessage(status.Message())
	}
	o.mu.Lock()
	o.attempts = append(o.attempts, a)
	o.current = rec
	o.byPod[podInfo.Pod.UID] = rec
	o.perPod[a.Pod]++
	o.mu.Unlock()
	return result, err
}

// cycleStatus is the status schedulingAlgorithm makes of SchedulePod's error, before PostFilter.
func cycleStatus(err error) *fwk.Status {
	if errors.Is(err, scheduler.ErrNoNodesAvailable) {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable).WithError(err)
	}
	var fitErr *framework.FitError
	if errors.As(err, &fitErr) {
		return fwk.NewStatus(fwk.Unschedulable).WithError(err)
	}
	return fwk.AsStatus(err)
}

// truncateMessage is kube's: the event's note is at most validation.NoteLengthLimit long.
func truncateMessage(message string) string {
	limit := validation.NoteLengthLimit
	if len(message) <= limit {
		return message
	}
	suffix := " ..."
	return message[:limit-len(suffix)] + suffix
}

// wrappedFailureHandler records the final status of a cycle (after PostFilter) or of a binding cycle.
func (o *oracle) wrappedFailureHandler(ctx context.Context, fw framework.Framework, podInfo *framework.QueuedPodInfo, status *fwk.Status, nominatingInfo *fwk.NominatingInfo, start time.Time) {
	inBinding := bindingCyclesInFlight() > 0
	o.failureHandler(ctx, fw, podInfo, status, nominatingInfo, start)
	o.mu.Lock()
	defer o.mu.Unlock()
	rec := o.byPod[podInfo.Pod.UID]
	if inBinding {
		o.bindEnded = true
	}
	if rec == nil {
		return
	}
	a := rec.attempt
	a.Node = nil
	a.Code = status.Code().String()
	a.Message = truncateMessage(status.Message())
	if inBinding {
		return
	}
	rec.failed = true
	if nominatingInfo != nil && nominatingInfo.Mode() == fwk.ModeOverride {
		a.NominatedNode = optionalName(nominatingInfo.NominatedNodeName)
	}
	if a.NominatedNode != nil && len(rec.victims) > 0 && rec.candidates == nil {
		// SelectCandidate had a single candidate, so nothing was compared.
		rec.candidates = []string{*a.NominatedNode}
	}
}

// bindingCyclesInFlight is the number of binding goroutines running (kube's own gauge, which every
// runBindingCycle increments on entry and decrements on exit).
func bindingCyclesInFlight() float64 {
	v, err := testutil.GetGaugeMetricValue(metrics.Goroutines.WithLabelValues(metrics.Binding))
	if err != nil {
		return 0
	}
	return v
}

// installTieBreaker finds the profile's DefaultPreemption plugin and puts the tie recorder in front of
// its preemption Interface. The framework keeps its PostFilter plugins in an unexported field; reading
// it is the only way to reach the plugin instance kube built from the profile.
func (o *oracle) installTieBreaker(fw framework.Framework) error {
	v := reflect.ValueOf(fw)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("unexpected framework type %T", fw)
	}
	field := v.Elem().FieldByName("postFilterPlugins")
	if !field.IsValid() {
		return fmt.Errorf("framework type %T has no postFilterPlugins", fw)
	}
	plugins, ok := reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem().Interface().([]fwk.PostFilterPlugin)
	if !ok {
		return fmt.Errorf("postFilterPlugins of %T has type %v", fw, field.Type())
	}
	for _, pl := range plugins {
		if dp, ok := pl.(*defaultpreemption.DefaultPreemption); ok {
			dp.Evaluator.Interface = &tieBreaker{Interface: dp.Evaluator.Interface, record: o.recordTies}
		}
	}
	return nil
}

func (o *oracle) recordTies(nodes []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.current != nil {
		o.current.candidates = nodes
	}
}

// finishCycle completes the current attempt's run-mode fields.
func (o *oracle) finishCycle() {
	o.mu.Lock()
	defer o.mu.Unlock()
	rec := o.current
	o.current = nil
	if rec == nil {
		return
	}
	a := rec.attempt
	victims := sortedCopy(rec.victims)
	a.Victims = &victims
	candidates := []string{}
	if a.NominatedNode != nil && len(rec.victims) > 0 {
		candidates = sortedCopy(rec.candidates)
	}
	a.PreemptionCandidates = &candidates
}

// Run evaluates the case in the oracle's mode.
func (o *oracle) Run() (*Result, error) {
	if o.mode == "cycle" {
		if err := o.runCycles(); err != nil {
			return nil, err
		}
		return &Result{Mode: o.mode, Attempts: o.attemptList()}, nil
	}
	if err := o.runScheduler(); err != nil {
		return nil, err
	}
	final, err := o.finalStates()
	if err != nil {
		return nil, err
	}
	return &Result{Mode: o.mode, Attempts: o.attemptList(), Final: final}, nil
}

func (o *oracle) attemptList() []*Attempt {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.attempts == nil {
		return []*Attempt{}
	}
	return o.attempts
}

// pendingPods are the case's pods without a node, in input order.
func (o *oracle) pendingPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, obj := range o.c.Objects {
		if isPending(obj) {
			out = append(out, obj.(*corev1.Pod))
		}
	}
	return out
}

// runCycles is cycle mode: one scheduling cycle per pending pod against the initial cluster, with a
// fresh CycleState and no PostFilter, as schedulingCycle prepares it.
func (o *oracle) runCycles() error {
	logger := klog.FromContext(o.ctx)
	if err := o.sched.Cache.UpdateSnapshot(logger, o.snapshot); err != nil {
		return err
	}
	for _, pod := range o.pendingPods() {
		fw, ok := o.sched.Profiles[pod.Spec.SchedulerName]
		if !ok || len(pod.Spec.SchedulingGates) > 0 {
			continue
		}
		podInfo, err := framework.NewPodInfo(pod.DeepCopy())
		if err != nil {
			return fmt.Errorf("pod %s: %w", podKey(pod), err)
		}
		qpi := &framework.QueuedPodInfo{PodInfo: podInfo, QueueingParams: framework.QueueingParams{Timestamp: o.clock.Now()}}
		state := framework.NewCycleState()
		state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
		_, _ = o.sched.SchedulePod(o.ctx, fw, state, qpi)
		o.mu.Lock()
		o.current = nil
		o.mu.Unlock()
	}
	return nil
}

// runScheduler is run mode: the pending pods are created one by one (1 ms apart on the fake clock),
// then ScheduleOne runs while activeQ has pods, each time until everything it started has settled,
// and the clock steps 1 ms after each; when only backoffQ has pods the clock jumps to the earliest
// backoff expiry.
func (o *oracle) runScheduler() error {
	for _, pod := range o.pendingPods() {
		if _, err := o.client.CoreV1().Pods(pod.Namespace).Create(o.ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %s: %w", podKey(pod), err)
		}
		if err := o.counts.waitQuiet(settleTimeout, nil); err != nil {
			return err
		}
		o.clock.Step(time.Millisecond)
	}
	queue := o.sched.SchedulingQueue
	for !o.boundReached() {
		if len(queue.PodsInActiveQ()) > 0 {
			if err := o.scheduleOne(); err != nil {
				return err
			}
			continue
		}
		flushed, err := o.flushBackoff()
		if err != nil || !flushed {
			return err
		}
	}
	return nil
}

func (o *oracle) boundReached() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, n := range o.perPod {
		if n >= maxAttemptsPerPod {
			return true
		}
	}
	return false
}

// scheduleOne runs one ScheduleOne and waits until its binding cycle (if any) has ended and every
// event it caused has been handled.
func (o *oracle) scheduleOne() error {
	o.mu.Lock()
	o.bindEnded = false
	o.mu.Unlock()
	o.sched.ScheduleOne(o.ctx)
	o.mu.Lock()
	rec := o.current
	binding := rec != nil && rec.scheduled && !rec.failed
	o.mu.Unlock()
	var bindingDone func() bool
	if binding {
		pod := rec.attempt.Pod
		bindingDone = func() bool {
			o.mu.Lock()
			ended := o.bindEnded
			o.mu.Unlock()
			return (ended || o.isBound(pod)) && bindingCyclesInFlight() == 0
		}
	}
	err := o.counts.waitQuiet(settleTimeout, bindingDone)
	o.finishCycle()
	// Every cycle at its own instant: the queue orders pods of equal priority by the time they were
	// added or last failed, and with equal times by the order of its own map walks, which is random.
	o.clock.Step(time.Millisecond)
	return err
}

func (o *oracle) isBound(key string) bool {
	ns, name := splitKey(key)
	obj, err := o.informers.Core().V1().Pods().Lister().Pods(ns).Get(name)
	return err == nil && obj.Spec.NodeName != ""
}

func splitKey(key string) (string, string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}

// flushBackoff moves the clock to the earliest backoff expiry in backoffQ and moves the pods whose
// backoff has then completed to activeQ, as the queue's flush on its ticker would. False when
// backoffQ is empty.
func (o *oracle) flushBackoff() (bool, error) {
	queue := o.sched.SchedulingQueue
	pods := queue.PodsInBackoffQ()
	if len(pods) == 0 {
		return false, nil
	}
	expiry := make(map[string]time.Time, len(pods))
	var earliest time.Time
	for _, pod := range pods {
		qpi, ok := queue.GetPod(pod.Name, pod.Namespace, pod.Spec.SchedulingGroup)
		if !ok {
			continue
		}
		t := o.backoffExpiry(qpi)
		if len(expiry) == 0 || t.Before(earliest) {
			earliest = t
		}
		expiry[podKey(pod)] = t
	}
	if earliest.After(o.clock.Now()) {
		o.clock.SetTime(earliest)
	}
	now := o.clock.Now()
	due := map[string]*corev1.Pod{}
	for _, pod := range pods {
		if t, ok := expiry[podKey(pod)]; ok && !t.After(now) {
			due[podKey(pod)] = pod
		}
	}
	if len(due) == 0 {
		return false, fmt.Errorf("backoffQ holds %d pods but none of them could be looked up", len(pods))
	}
	queue.Activate(klog.FromContext(o.ctx), due)
	return true, nil
}

// backoffExpiry is the backoff queue's getBackoffTime (SchedulerPopFromBackoffQ off: no window alignment).
func (o *oracle) backoffExpiry(qpi *framework.QueuedPodInfo) time.Time {
	if !qpi.BackoffExpiration.IsZero() {
		return qpi.BackoffExpiration
	}
	initial := time.Duration(o.c.Config.PodInitialBackoffSeconds) * time.Second
	maxBackoff := time.Duration(o.c.Config.PodMaxBackoffSeconds) * time.Second
	count := qpi.UnschedulableCount
	if qpi.ConsecutiveErrorsCount > 0 {
		count = qpi.ConsecutiveErrorsCount
	}
	if maxBackoff == 0 || count == 0 {
		return time.Time{}
	}
	d := maxBackoff
	if shift := count - 1; initial <= maxBackoff>>shift {
		d = initial << shift
	}
	return qpi.Timestamp.Add(d)
}

// finalStates reads every pending pod's end state from the cluster.
func (o *oracle) finalStates() (map[string]*FinalState, error) {
	out := map[string]*FinalState{}
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	for _, pod := range o.pendingPods() {
		st := &FinalState{}
		obj, err := o.tracker.Get(gvr, pod.Namespace, pod.Name)
		if err == nil {
			cur := obj.(*corev1.Pod)
			st.Node = optionalName(cur.Spec.NodeName)
			st.NominatedNode = optionalName(cur.Status.NominatedNodeName)
		}
		out[podKey(pod)] = st
	}
	return out, nil
}
