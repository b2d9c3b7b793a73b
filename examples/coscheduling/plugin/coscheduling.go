// Package coscheduling is the Coscheduling plugin of kubernetes-sigs/scheduler-plugins
// (pkg/coscheduling at commit 903da7df) on the wasmsched Go SDK: gang scheduling of the pods of a
// PodGroup (KEP 42, kep/42-podgroup-coscheduling). See ../README.md for what differs and why.
package coscheduling

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/framework"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
	"github.com/wasmsched/wasmsched/sdk/go/klog"
)

// Name is the name of the plugin used in Registry and configurations.
const Name = "Coscheduling"

// Args is scheduler-plugins' CoschedulingArgs (apis/config/types.go), read from the guestConfig
// JSON with the v1 API's field names; an absent field takes the v1 default (apis/config/v1/defaults.go).
type Args struct {
	// PermitWaitingTimeSeconds is the waiting timeout in seconds (default 60).
	PermitWaitingTimeSeconds *int64 `json:"permitWaitingTimeSeconds,omitempty"`
	// PodGroupBackoffSeconds is the backoff before a pod group can be scheduled again (default 0).
	PodGroupBackoffSeconds *int64 `json:"podGroupBackoffSeconds,omitempty"`
	// PodGroupRejectPercentage (0-100): at or below this percentage of unassigned pods relative to
	// minMember, PostFilter does not reject the group (default 10).
	PodGroupRejectPercentage *int32 `json:"podGroupRejectPercentage,omitempty"`
}

const (
	defaultPermitWaitingTimeSeconds int64 = 60
	defaultPodGroupBackoffSeconds   int64 = 0
	defaultPodGroupRejectPercentage int32 = 10
)

// ValidateCoschedulingArgs is upstream's apis/config/validation.ValidateCoschedulingArgs (with its
// texts, as field.ErrorList's aggregate prints them).
func ValidateCoschedulingArgs(permit, backoff int64, reject int32) error {
	var errs []string
	if permit < 0 {
		errs = append(errs, fmt.Sprintf("permitWaitingTimeSeconds: Invalid value: %d: must be greater than 0", permit))
	}
	if backoff < 0 {
		errs = append(errs, fmt.Sprintf("podGroupBackoffSeconds: Invalid value: %d: must be greater than 0", backoff))
	}
	if reject < 0 || reject > 100 {
		errs = append(errs, fmt.Sprintf("podGroupRejectPercentage: Invalid value: %d: must be between 0 and 100", reject))
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s", errs[0])
	}
	msg := "["
	for i, e := range errs {
		if i > 0 {
			msg += ", "
		}
		msg += e
	}
	return fmt.Errorf("%s]", msg)
}

// Coscheduling is a plugin that schedules pods in a group.
type Coscheduling struct {
	pgMgr             *PodGroupManager
	scheduleTimeout   *time.Duration
	pgBackoff         *time.Duration
	pgRejectThreshold float64
}

var (
	_ api.PreEnqueuePlugin        = &Coscheduling{}
	_ api.QueueSortPlugin         = &Coscheduling{}
	_ api.PreFilterPlugin         = &Coscheduling{}
	_ api.PostFilterPlugin        = &Coscheduling{}
	_ api.PermitPlugin            = &Coscheduling{}
	_ api.ReservePlugin           = &Coscheduling{}
	_ api.PostBindPlugin          = &Coscheduling{}
	_ framework.EnqueueExtensions = &Coscheduling{}
)

// New decodes the args (upstream's defaults and validation) and builds the plugin.
func New(config []byte) (*Coscheduling, error) {
	return NewWithClock(config, handle.Now)
}

// NewWithClock is New with a clock other than the scheduler's, for tests.
func NewWithClock(config []byte, now func() time.Time) (*Coscheduling, error) {
	var args Args
	if len(bytes.TrimSpace(config)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(config))
		dec.DisallowUnknownFields() // kube-scheduler decodes plugin args strictly
		if err := dec.Decode(&args); err != nil {
			return nil, fmt.Errorf("%s: decoding guestConfig %q: %w", Name, config, err)
		}
	}
	permit, backoff, reject := defaultPermitWaitingTimeSeconds, defaultPodGroupBackoffSeconds, defaultPodGroupRejectPercentage
	if args.PermitWaitingTimeSeconds != nil {
		permit = *args.PermitWaitingTimeSeconds
	}
	if args.PodGroupBackoffSeconds != nil {
		backoff = *args.PodGroupBackoffSeconds
	}
	if args.PodGroupRejectPercentage != nil {
		reject = *args.PodGroupRejectPercentage
	}
	if err := ValidateCoschedulingArgs(permit, backoff, reject); err != nil {
		return nil, fmt.Errorf("%s: invalid args: %w", Name, err)
	}
	scheduleTimeDuration := time.Duration(permit) * time.Second
	pl := &Coscheduling{
		pgMgr:             NewPodGroupManager(&scheduleTimeDuration, now),
		scheduleTimeout:   &scheduleTimeDuration,
		pgRejectThreshold: float64(reject) / 100.0,
	}
	if backoff > 0 {
		pgBackoff := time.Duration(backoff) * time.Second
		pl.pgBackoff = &pgBackoff
	}
	return pl, nil
}

// Name returns the name of the plugin.
func (cs *Coscheduling) Name() string { return Name }

// EventsToRegister: a pod added (a sibling may complete the quorum), a PodGroup added or updated.
func (cs *Coscheduling) EventsToRegister() ([]framework.ClusterEventWithHint, error) {
	pgGVK := framework.WatchedResource(PodGroupGVR.Group, PodGroupGVR.Version, PodGroupGVR.Resource)
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Add}},
		{Event: framework.ClusterEvent{Resource: pgGVK, ActionType: framework.Add | framework.Update}},
	}, nil
}

// podPriority is component-helpers' corev1.PodPriority.
func podPriority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// SortKey orders the queue as upstream's Less: 1. higher priority first; 2. earlier creation
// timestamp of the PodGroup (or its last failure) or of the pod (its initial attempt); 3. the
// namespace/name key.
func (cs *Coscheduling) SortKey(p api.QueuedPodInfo) api.SortKey {
	pod := p.Pod()
	ts := p.Timestamp // upstream dereferences InitialAttemptTimestamp; a never-popped pod has none
	if p.InitialAttemptTimestamp != nil {
		ts = *p.InitialAttemptTimestamp
	}
	creation := cs.pgMgr.GetCreationTimestamp(pod, ts)
	return api.SortKey{}.Int64Desc(int64(podPriority(pod))).Time(creation).String(GetNamespacedName(pod))
}

// Less is upstream's Less, through the keys.
func (cs *Coscheduling) Less(a, b api.QueuedPodInfo) bool { return api.Less(cs, a, b) }

// PreEnqueue gates a pod whose PodGroup does not exist yet or has fewer pods than minMember, so
// that it does not enter the active queue (and fail PreFilter, and back off) until its gang is
// there; the texts are kube 1.37's gangscheduling plugin's.
func (cs *Coscheduling) PreEnqueue(podInfo api.PodInfo) *api.Status {
	pod := podInfo.Pod()
	pgName := GetPodGroupLabel(pod)
	if pgName == "" {
		return nil
	}
	_, pg, err := GetPodGroup(pod)
	if err != nil {
		return api.AsStatus(err)
	}
	if pg == nil {
		return api.NewStatus(api.UnschedulableAndUnresolvable,
			fmt.Sprintf("waiting for pods's pod group %q to appear in scheduling queue", pgName))
	}
	pods, err := listGroupPods(pod.Namespace, pgName)
	if err != nil {
		return api.AsStatus(err)
	}
	if len(pods) < int(pg.Spec.MinMember) {
		return api.NewStatus(api.UnschedulableAndUnresolvable,
			"waiting for minCount pods from a gang to appear in scheduling queue")
	}
	// This pod may be the one that completes the quorum: its siblings gated for want of it are let in.
	// kube 1.37's gangscheduling is woken by the pod's UnscheduledPodAdd event, which kube sends only with
	// the GenericWorkload feature gate; Activate runs a gated pod's PreEnqueue again (docs/abi.md §15.4).
	siblings := map[string]*corev1.Pod{}
	for _, p := range pods {
		if p.UID != pod.UID && p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
			siblings[GetNamespacedName(p)] = p
		}
	}
	if len(siblings) != 0 {
		handle.Activate(siblings)
	}
	return nil
}

// PreFilter checks the deny list, the quorum, gated siblings and minResources; a failure is
// UnschedulableAndUnresolvable, so that no preemption is attempted.
func (cs *Coscheduling) PreFilter(_ api.CycleState, podInfo api.PodInfo) ([]string, *api.Status) {
	pod := podInfo.Pod()
	if err := cs.pgMgr.PreFilter(pod); err != nil {
		klog.ErrorS(err, "PreFilter failed", "pod", pod.Namespace+"/"+pod.Name)
		return nil, api.NewStatus(api.UnschedulableAndUnresolvable, err.Error())
	}
	return nil, nil
}

// PostFilter rejects the whole group when a pod of it is unschedulable, unless enough of the group
// is assigned already or the gap is within podGroupRejectPercentage.
func (cs *Coscheduling) PostFilter(_ api.CycleState, podInfo api.PodInfo, _ api.NodeToStatus) (string,
	api.NominatingMode, *api.Status) {
	pod := podInfo.Pod()
	pgName, pg, _ := GetPodGroup(pod)
	if pg == nil {
		return "", api.ModeNoop, api.NewStatus(api.Unschedulable, "can not find pod group")
	}
	pods, listErr := listGroupPods(pod.Namespace, pg.Name)
	if listErr == nil {
		cs.pgMgr.syncAssigned(pgName, pods)
	}

	// This indicates there are already enough Pods satisfying the PodGroup, so don't bother to
	// reject the whole PodGroup.
	assigned := cs.pgMgr.GetAssignedPodCount(pgName)
	if assigned >= int(pg.Spec.MinMember) {
		return "", api.ModeNoop, api.NewStatus(api.Unschedulable)
	}

	// If the gap is less than/equal the reject threshold, we may want to try subsequent Pods to see
	// they can satisfy the PodGroup.
	notAssignedPercentage := float64(int(pg.Spec.MinMember)-assigned) / float64(pg.Spec.MinMember)
	if notAssignedPercentage <= cs.pgRejectThreshold {
		return "", api.ModeNoop, api.NewStatus(api.Unschedulable)
	}

	// It's based on an implicit assumption: if the nth Pod failed, it's inferrable other Pods
	// belonging to the same PodGroup would be very likely to fail.
	handle.IterateOverWaitingPods(func(waitingPod api.WaitingPod) {
		if waitingPod.GetPod().Namespace == pod.Namespace && GetPodGroupLabel(waitingPod.GetPod()) == pg.Name {
			waitingPod.Reject(cs.Name(), "optimistic rejection in PostFilter")
		}
	})

	if cs.pgBackoff != nil {
		if listErr == nil && len(pods) >= int(pg.Spec.MinMember) {
			cs.pgMgr.BackoffPodGroup(pgName, *cs.pgBackoff)
		}
	}

	cs.pgMgr.DeletePermittedPodGroup(pgName)
	cs.pgMgr.MarkPodGroupScheduleFailure(pgName)
	return "", api.ModeNoop, api.NewStatus(api.Unschedulable,
		fmt.Sprintf("PodGroup %v gets rejected due to Pod %v is unschedulable even after PostFilter", pgName, pod.Name))
}

// Permit holds a pod until minMember pods of its group are assigned, then allows them all.
func (cs *Coscheduling) Permit(state api.CycleState, podInfo api.PodInfo, nodeName string) (*api.Status, time.Duration) {
	pod := podInfo.Pod()
	waitTime := *cs.scheduleTimeout
	var retStatus *api.Status
	switch cs.pgMgr.Permit(state, pod) {
	case PodGroupNotSpecified:
		return api.NewStatus(api.Success, ""), 0
	case PodGroupNotFound:
		return api.NewStatus(api.Unschedulable, "PodGroup not found"), 0
	case Wait:
		klog.InfoS("Pod is waiting to be scheduled to node", "pod", pod.Namespace+"/"+pod.Name, "nodeName", nodeName)
		_, pg, _ := GetPodGroup(pod)
		if wait := GetWaitTimeDuration(pg, cs.scheduleTimeout); wait != 0 {
			waitTime = wait
		}
		retStatus = api.NewStatus(api.Wait)
		// We will also request to move the sibling pods back to activeQ.
		cs.pgMgr.ActivateSiblings(pod, state)
	case Success:
		pgFullName := GetPodGroupFullName(pod)
		cs.pgMgr.ClearPodGroupScheduleFailure(pgFullName)
		handle.IterateOverWaitingPods(func(waitingPod api.WaitingPod) {
			if GetPodGroupFullName(waitingPod.GetPod()) == pgFullName {
				waitingPod.Allow(cs.Name())
			}
		})
		retStatus = api.NewStatus(api.Success)
		waitTime = 0
	}
	return retStatus, waitTime
}

// Reserve is a no-op.
func (cs *Coscheduling) Reserve(api.CycleState, api.PodInfo, string) *api.Status { return nil }

// Unreserve rejects all other Pods in the PodGroup when one of the pods in the group times out or
// fails later.
func (cs *Coscheduling) Unreserve(_ api.CycleState, podInfo api.PodInfo, _ string) {
	pod := podInfo.Pod()
	pgName, pg, _ := GetPodGroup(pod)
	if pg == nil {
		return
	}
	cs.pgMgr.Unreserve(pod)
	handle.IterateOverWaitingPods(func(waitingPod api.WaitingPod) {
		if waitingPod.GetPod().Namespace == pod.Namespace && GetPodGroupLabel(waitingPod.GetPod()) == pg.Name {
			waitingPod.Reject(cs.Name(), "rejection in Unreserve")
		}
	})
	cs.pgMgr.DeletePermittedPodGroup(pgName)
	cs.pgMgr.MarkPodGroupScheduleFailure(pgName)
}

// PostBind keeps the bookkeeping upstream's pod informer keeps with AddFunc: a bound member of a
// group counts as assigned (until it is deleted). Upstream has no PostBind.
func (cs *Coscheduling) PostBind(_ api.CycleState, podInfo api.PodInfo, _ string) {
	cs.pgMgr.MarkBound(podInfo.Pod())
}
