package coscheduling

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The PodGroup v1alpha1 types this plugin reads, copied from kubernetes-sigs/scheduler-plugins
// apis/scheduling/v1alpha1/types.go at commit 903da7df (the fields Coscheduling uses; the status is
// the controller's and is not read). The sigs.k8s.io/scheduler-plugins module itself is not a
// dependency: it requires k8s.io/kubernetes.

// GroupName is scheduling.x-k8s.io (apis/scheduling/register.go).
const GroupName = "scheduling.x-k8s.io"

// PodGroupLabel is the label that names a pod's PodGroup (v1alpha1.PodGroupLabel).
const PodGroupLabel = GroupName + "/pod-group"

// PodGroupGVR is the resource the plugin's args must declare in `watch` (docs/abi.md §14.2).
var PodGroupGVR = schema.GroupVersionResource{Group: GroupName, Version: "v1alpha1", Resource: "podgroups"}

// PodGroup is a collection of Pod; used for batch workload.
type PodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PodGroupSpec `json:"spec,omitempty"`
}

// PodGroupSpec represents the template of a pod group.
type PodGroupSpec struct {
	// MinMember defines the minimal number of members/tasks to run the pod group.
	MinMember int32 `json:"minMember,omitempty"`
	// MinResources defines the minimal resource of members/tasks to run the pod group.
	MinResources corev1.ResourceList `json:"minResources,omitempty"`
	// ScheduleTimeoutSeconds defines the maximal time of members/tasks to wait before run the pod group.
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// pkg/util/podgroup.go.

// DefaultWaitTime is 60s if ScheduleTimeoutSeconds is not specified.
const DefaultWaitTime = 60 * time.Second

// GetPodGroupLabel gets the pod group name from the pod's labels.
func GetPodGroupLabel(pod *corev1.Pod) string { return pod.Labels[PodGroupLabel] }

// GetPodGroupFullName gets the namespaced group name from the pod's labels.
func GetPodGroupFullName(pod *corev1.Pod) string {
	pgName := GetPodGroupLabel(pod)
	if len(pgName) == 0 {
		return ""
	}
	return fmt.Sprintf("%v/%v", pod.Namespace, pgName)
}

// GetWaitTimeDuration returns the PodGroup's scheduleTimeoutSeconds, else scheduleTimeout if not
// nil or 0, else DefaultWaitTime.
func GetWaitTimeDuration(pg *PodGroup, scheduleTimeout *time.Duration) time.Duration {
	if pg != nil && pg.Spec.ScheduleTimeoutSeconds != nil {
		return time.Duration(*pg.Spec.ScheduleTimeoutSeconds) * time.Second
	}
	if scheduleTimeout != nil && *scheduleTimeout != 0 {
		return *scheduleTimeout
	}
	return DefaultWaitTime
}

// GetNamespacedName returns "namespace/name".
func GetNamespacedName(obj metav1.Object) string {
	return fmt.Sprintf("%v/%v", obj.GetNamespace(), obj.GetName())
}

// decodePodGroup reads the host's JSON of a PodGroup (a quantity may be a number or a string).
func decodePodGroup(obj map[string]any) (*PodGroup, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	pg := &PodGroup{}
	if err := json.Unmarshal(raw, pg); err != nil {
		return nil, fmt.Errorf("decoding PodGroup: %w", err)
	}
	return pg, nil
}
