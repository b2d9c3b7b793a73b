package coscheduling

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
	"github.com/wasmsched/wasmsched/sdk/go/klog"
)

// This file is pkg/coscheduling/core/core.go of kubernetes-sigs/scheduler-plugins at 903da7df,
// function by function. Its state lives in the guest's memory across pods: the plugin runs with
// `sharedInstance: true` (docs/abi.md §15.6), one instance and one call at a time, so the mutexes
// upstream needs are gone. Time is the scheduler's clock (handle.Now, §15.5).

// Status is the result of the manager's Permit.
type Status string

const (
	// PodGroupNotSpecified denotes no PodGroup is specified in the Pod spec.
	PodGroupNotSpecified Status = "PodGroup not specified"
	// PodGroupNotFound denotes the specified PodGroup in the Pod spec is not found in API server.
	PodGroupNotFound Status = "PodGroup not found"
	Success          Status = "Success"
	Wait             Status = "Wait"

	permitStateKey = "PermitCoscheduling"
)

// PermitState asks Permit to activate the pod's siblings.
type PermitState struct {
	Activate bool
}

// Clone is kube's StateData.Clone.
func (s *PermitState) Clone() api.StateData { return &PermitState{Activate: s.Activate} }

// PodGroupManager keeps the gangs' bookkeeping.
type PodGroupManager struct {
	now func() time.Time
	// scheduleTimeout is the default timeout for podgroup scheduling.
	scheduleTimeout *time.Duration
	// permittedPG stores the podgroup name which has passed the pre resource check.
	permittedPG *ttlCache
	// backedOffPG stores the podgroup name which failed scheduling recently.
	backedOffPG *ttlCache
	// lastFailedSchedulePG stores the last time a PodGroup's scheduling attempt failed.
	lastFailedSchedulePG map[string]time.Time
	// assignedPodsByPG stores the pods assumed or bound for podgroups.
	assignedPodsByPG map[string]map[string]struct{}
	// boundPodsByPG are the assigned pods known to be bound (PostBind, or bound when listed): upstream's
	// pod informer forgets them when they are deleted (DeleteFunc), which syncAssigned reproduces.
	boundPodsByPG map[string]map[string]struct{}
}

// NewPodGroupManager creates the manager.
func NewPodGroupManager(scheduleTimeout *time.Duration, now func() time.Time) *PodGroupManager {
	return &PodGroupManager{
		now:                  now,
		scheduleTimeout:      scheduleTimeout,
		permittedPG:          newTTLCache(now),
		backedOffPG:          newTTLCache(now),
		lastFailedSchedulePG: map[string]time.Time{},
		assignedPodsByPG:     map[string]map[string]struct{}{},
		boundPodsByPG:        map[string]map[string]struct{}{},
	}
}

func insert(m map[string]map[string]struct{}, key, name string) {
	s := m[key]
	if s == nil {
		s = map[string]struct{}{}
		m[key] = s
	}
	s[name] = struct{}{}
}

// listGroupPods is upstream's podLister.Pods(ns).List(pod-group=<name>).
func listGroupPods(namespace, pgName string) ([]*corev1.Pod, error) {
	return handle.Pods().Pods(namespace).List(labels.SelectorFromSet(labels.Set{PodGroupLabel: pgName}))
}

// syncAssigned brings assignedPodsByPG to what upstream's pod informer handlers give: AddFunc counts a
// bound pod of the group (e.g. bound before this scheduler started), DeleteFunc forgets a deleted
// one. A guest sees no informer events, so the group's pods are listed instead, when counted.
func (pgMgr *PodGroupManager) syncAssigned(pgFullName string, pods []*corev1.Pod) {
	present := make(map[string]bool, len(pods))
	for _, p := range pods {
		present[p.Name] = true
		if p.Spec.NodeName != "" {
			insert(pgMgr.assignedPodsByPG, pgFullName, p.Name)
			insert(pgMgr.boundPodsByPG, pgFullName, p.Name)
		}
	}
	for name := range pgMgr.boundPodsByPG[pgFullName] {
		if !present[name] {
			delete(pgMgr.boundPodsByPG[pgFullName], name)
			pgMgr.unassign(pgFullName, name)
		}
	}
}

// MarkBound is PostBind's bookkeeping: the pod is bound, and counts as assigned until deleted.
func (pgMgr *PodGroupManager) MarkBound(pod *corev1.Pod) {
	pgFullName := GetPodGroupFullName(pod)
	if pgFullName == "" {
		return
	}
	insert(pgMgr.assignedPodsByPG, pgFullName, pod.Name)
	insert(pgMgr.boundPodsByPG, pgFullName, pod.Name)
}

// GetAssignedPodCount returns how many pods of the group are assumed or bound.
func (pgMgr *PodGroupManager) GetAssignedPodCount(pgName string) int {
	return len(pgMgr.assignedPodsByPG[pgName])
}

// BackoffPodGroup denies the group for backoff.
func (pgMgr *PodGroupManager) BackoffPodGroup(pgName string, backoff time.Duration) {
	if backoff == time.Duration(0) {
		return
	}
	pgMgr.backedOffPG.Add(pgName, backoff)
}

// MarkPodGroupScheduleFailure records the current time as the last scheduling failure of the group,
// used by GetCreationTimestamp to prevent head-of-line blocking.
func (pgMgr *PodGroupManager) MarkPodGroupScheduleFailure(pgName string) {
	pgMgr.lastFailedSchedulePG[pgName] = pgMgr.now()
}

// ClearPodGroupScheduleFailure removes the group's failure record.
func (pgMgr *PodGroupManager) ClearPodGroupScheduleFailure(pgName string) {
	delete(pgMgr.lastFailedSchedulePG, pgName)
}

// ActivateSiblings activates the pods of the pod's group other than the pod, when Permit asked for it
// in the state. Upstream stashes them in the CycleState's PodsToActivate, which the framework
// activates; the guest calls handle.Activate (kube's Handle.Activate) itself.
func (pgMgr *PodGroupManager) ActivateSiblings(pod *corev1.Pod, state api.CycleState) {
	pgName := GetPodGroupLabel(pod)
	if pgName == "" {
		return
	}
	if c, ok := state.Read(permitStateKey); !ok {
		return
	} else if s, ok := c.(*PermitState); !ok || !s.Activate {
		return
	}
	pods, err := listGroupPods(pod.Namespace, pgName)
	if err != nil {
		klog.ErrorS(err, "Failed to obtain pods belong to a PodGroup", "podGroup", pgName)
		return
	}
	toActivate := map[string]*corev1.Pod{}
	for _, p := range pods {
		if p.UID == pod.UID {
			continue
		}
		toActivate[GetNamespacedName(p)] = p
	}
	if len(toActivate) != 0 {
		handle.Activate(toActivate)
	}
}

// PreFilter filters out a pod if it belongs to a podgroup that was recently denied, or the podgroup
// has fewer pods than its minMember, or too many of them are gated, or the cluster cannot hold its
// minResources.
func (pgMgr *PodGroupManager) PreFilter(pod *corev1.Pod) error {
	pgFullName, pg, err := GetPodGroup(pod)
	if err != nil {
		return err
	}
	if pg == nil {
		return nil
	}

	if pgMgr.backedOffPG.Get(pgFullName) {
		return fmt.Errorf("podGroup %v failed recently", pgFullName)
	}

	pods, err := listGroupPods(pod.Namespace, GetPodGroupLabel(pod))
	if err != nil {
		return fmt.Errorf("podLister list pods failed: %w", err)
	}

	quorumGap := int(pg.Spec.MinMember) - len(pods)
	if quorumGap > 0 {
		return fmt.Errorf("pre-filter pod %v cannot find enough sibling pods, "+
			"current pods number: %v, minMember of group: %v", pod.Name, len(pods), pg.Spec.MinMember)
	}

	// Extra check to see how many SchedulingGated Pods can be tolerated.
	for _, p := range pods {
		if len(p.Spec.SchedulingGates) > 0 {
			quorumGap++
		}
		if quorumGap > 0 {
			return fmt.Errorf("pre-filter pod %v cannot proceed due to gated pods in the same PodGroup", pod.Name)
		}
	}

	if pg.Spec.MinResources == nil {
		return nil
	}
	if pgMgr.permittedPG.Get(pgFullName) {
		return nil
	}

	nodes, err := handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return err
	}
	minResources := pg.Spec.MinResources.DeepCopy()
	minResources[corev1.ResourcePods] = *resource.NewQuantity(int64(pg.Spec.MinMember), resource.DecimalSI)
	if err := CheckClusterResource(nodes, minResources, pgFullName); err != nil {
		klog.ErrorS(err, "Failed to PreFilter", "podGroup", pgFullName)
		return err
	}
	pgMgr.permittedPG.Add(pgFullName, *pgMgr.scheduleTimeout)
	return nil
}

// Permit counts the pod as assigned: Success once the group has minMember assigned pods, else Wait.
func (pgMgr *PodGroupManager) Permit(state api.CycleState, pod *corev1.Pod) Status {
	pgFullName, pg, err := GetPodGroup(pod)
	if pgFullName == "" {
		return PodGroupNotSpecified
	}
	if pg == nil || err != nil {
		// A Pod with a podGroup name but without a PodGroup found is denied.
		return PodGroupNotFound
	}
	if pods, err := listGroupPods(pod.Namespace, pg.Name); err == nil {
		pgMgr.syncAssigned(pgFullName, pods)
	}
	insert(pgMgr.assignedPodsByPG, pgFullName, pod.Name)
	assigned := pgMgr.assignedPodsByPG[pgFullName]
	if len(assigned) >= int(pg.Spec.MinMember) {
		return Success
	}
	if len(assigned) == 1 {
		// Only the group's first assigned pod activates its siblings (scheduler-plugins issue #682).
		state.Write(permitStateKey, &PermitState{Activate: true})
	}
	return Wait
}

func (pgMgr *PodGroupManager) unassign(pgFullName, name string) {
	if assigned, exist := pgMgr.assignedPodsByPG[pgFullName]; exist {
		delete(assigned, name)
		if len(assigned) == 0 {
			delete(pgMgr.assignedPodsByPG, pgFullName)
		}
	}
}

// Unreserve invalidates the assigned pod when scheduling or binding failed.
func (pgMgr *PodGroupManager) Unreserve(pod *corev1.Pod) {
	pgFullName := GetPodGroupFullName(pod)
	if pgFullName == "" {
		return
	}
	pgMgr.unassign(pgFullName, pod.Name)
	if b := pgMgr.boundPodsByPG[pgFullName]; b != nil {
		delete(b, pod.Name)
	}
}

// GetCreationTimestamp returns the group's last failure time if it failed recently (to prevent
// head-of-line blocking), else the PodGroup's creationTimestamp, else ts (a pod without a group, or
// whose group does not exist).
func (pgMgr *PodGroupManager) GetCreationTimestamp(pod *corev1.Pod, ts time.Time) time.Time {
	pgName := GetPodGroupLabel(pod)
	if len(pgName) == 0 {
		return ts
	}
	pgFullName := fmt.Sprintf("%v/%v", pod.Namespace, pgName)
	if lastFailed, exist := pgMgr.lastFailedSchedulePG[pgFullName]; exist {
		return lastFailed
	}
	_, pg, err := GetPodGroup(pod)
	if err != nil || pg == nil {
		return ts
	}
	return pg.CreationTimestamp.Time
}

// DeletePermittedPodGroup deletes a podGroup that passed PreFilter but reached PostFilter.
func (pgMgr *PodGroupManager) DeletePermittedPodGroup(pgFullName string) {
	pgMgr.permittedPG.Delete(pgFullName)
}

// GetPodGroup returns the pod's group's full name and the PodGroup (nil when the pod has no group or
// the group does not exist). Upstream reads it with a controller-runtime client; here through
// handle.Objects, so the plugin's args must watch podgroups (docs/abi.md §14.2). An error is a host
// failure other than NotFound (upstream treats every Get error as "not found").
func GetPodGroup(pod *corev1.Pod) (string, *PodGroup, error) {
	pgName := GetPodGroupLabel(pod)
	if len(pgName) == 0 {
		return "", nil, nil
	}
	full := fmt.Sprintf("%v/%v", pod.Namespace, pgName)
	u, err := handle.Objects(PodGroupGVR).Get(pod.Namespace, pgName)
	if apierrors.IsNotFound(err) {
		return full, nil, nil
	}
	if err != nil {
		return full, nil, err
	}
	if pg, ok := podGroups[u]; ok {
		return full, pg, nil
	}
	pg, err := decodePodGroup(u.Object)
	if err != nil {
		return full, nil, err
	}
	if len(podGroups) >= podGroupsMax {
		clear(podGroups)
	}
	podGroups[u] = pg
	return full, pg, nil
}

// podGroups keeps the typed PodGroup of each watched object the SDK returned: the SDK returns the same
// object while the host's bytes stay the same, so a PodGroup is converted once per version (a JSON round
// trip, dear in a guest, that upstream's cached client does not pay). Read only.
var podGroups = map[*unstructured.Unstructured]*PodGroup{}

const podGroupsMax = 4096

// CheckClusterResource checks if the free resources of the nodes, not counting the group's own
// pods, can satisfy resourceRequest; the error details the gap.
func CheckClusterResource(nodeList []api.NodeInfo, resourceRequest corev1.ResourceList, desiredPodGroupName string) error {
	for _, info := range nodeList {
		if info == nil || info.Node() == nil {
			continue
		}
		nodeResource := getNodeResource(info, desiredPodGroupName).ResourceList()
		for name, quant := range resourceRequest {
			quant.Sub(nodeResource[name])
			if quant.Sign() <= 0 {
				delete(resourceRequest, name)
				continue
			}
			resourceRequest[name] = quant
		}
		if len(resourceRequest) == 0 {
			return nil
		}
	}
	return fmt.Errorf("resource gap: %v", resourceRequest)
}

// getNodeResource is the node's free resources with the group's pods removed, as upstream computes
// on a NodeInfo snapshot with RemovePod: their requests (kube's NodeInfo accounting, through
// component-helpers' PodRequests) are given back.
func getNodeResource(info api.NodeInfo, desiredPodGroupName string) *api.Resource {
	allocatable, requested := info.Allocatable(), *info.Requested()
	requested.ScalarResources = map[corev1.ResourceName]int64{}
	for k, v := range info.Requested().ScalarResources {
		requested.ScalarResources[k] = v
	}
	pods := len(info.GetPods())
	for _, podInfo := range info.GetPods() {
		p := podInfo.Pod()
		if p == nil || GetPodGroupFullName(p) != desiredPodGroupName {
			continue
		}
		pods--
		reqs := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		for name, q := range reqs {
			switch name {
			case corev1.ResourceCPU:
				requested.MilliCPU -= q.MilliValue()
			case corev1.ResourceMemory:
				requested.Memory -= q.Value()
			case corev1.ResourceEphemeralStorage:
				requested.EphemeralStorage -= q.Value()
			default:
				if _, ok := requested.ScalarResources[name]; ok {
					requested.ScalarResources[name] -= q.Value()
				}
			}
		}
	}
	left := &api.Resource{ScalarResources: map[corev1.ResourceName]int64{}}
	left.AllowedPodNumber = allocatable.AllowedPodNumber - pods
	left.MilliCPU = allocatable.MilliCPU - requested.MilliCPU
	left.Memory = allocatable.Memory - requested.Memory
	left.EphemeralStorage = allocatable.EphemeralStorage - requested.EphemeralStorage
	for k, a := range allocatable.ScalarResources {
		if r, ok := requested.ScalarResources[k]; ok {
			left.ScalarResources[k] = a - r
		} else {
			left.ScalarResources[k] = a
		}
	}
	return left
}
