package handle

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/internal/guest"
)

// ABI v2: the queue and gangs (docs/abi.md §15).

// IterateOverWaitingPods calls fn for every pod waiting at Permit in the profile (kube's
// Handle.IterateOverWaitingPods), in namespace/name order (handle.waiting_pods). fn may Allow or
// Reject them; an allowed or rejected pod's binding cycle runs after the running call returns.
func IterateOverWaitingPods(fn func(api.WaitingPod)) {
	for _, w := range guest.WaitingPods() {
		fn(w)
	}
}

// Pods returns the lister of every pod the scheduler knows, scheduled or not (kube's
// SharedInformerFactory().Core().V1().Pods().Lister(), over handle.pods.list, §15.4).
func Pods() PodLister { return PodLister{} }

// PodLister is kube's corelisters.PodLister. Each List asks the host; a pod is decoded once per
// version (the same bytes) and shared by the lists that return it: read only, as kube's listers' pods.
type PodLister struct{}

// List returns the pods of every namespace whose labels match selector (nil for all), in
// namespace/name order.
func (PodLister) List(selector labels.Selector) ([]*corev1.Pod, error) { return listPods("", selector) }

// Pods returns the lister of one namespace (kube's PodLister.Pods).
func (PodLister) Pods(namespace string) PodNamespaceLister { return PodNamespaceLister{namespace} }

// PodNamespaceLister is kube's corelisters.PodNamespaceLister.
type PodNamespaceLister struct{ namespace string }

// List returns the namespace's pods whose labels match selector (nil for all), in name order.
func (l PodNamespaceLister) List(selector labels.Selector) ([]*corev1.Pod, error) {
	return listPods(l.namespace, selector)
}

// Get returns the named pod of the namespace, or a NotFound error (apierrors.IsNotFound).
func (l PodNamespaceLister) Get(name string) (*corev1.Pod, error) {
	pods, _ := listPods(l.namespace, nil)
	for _, p := range pods {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
}

// listPods sends the selector's text to the host and checks each pod against the selector too, as
// Objects does, so the result never depends on how a host parses it.
func listPods(namespace string, selector labels.Selector) ([]*corev1.Pod, error) {
	if selector == nil {
		selector = labels.Everything()
	}
	if !selector.Empty() && selector.String() == "" { // labels.Nothing(): its text would match all
		return nil, nil
	}
	var out []*corev1.Pod
	for _, p := range guest.ListPods(guest.PodQuery{Namespace: namespace, LabelSelector: selector.String()}) {
		if selector.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out, nil
}

// Activate moves the pods to the active queue if they are in the backoff queue or among the
// unschedulable pods (kube's Handle.Activate; handle.activate, §15.4). The map's values are
// unused, as in kube; its keys are the pods' "namespace/name".
func Activate(pods map[string]*corev1.Pod) {
	keys := make([]string, 0, len(pods))
	for k := range pods {
		keys = append(keys, k)
	}
	guest.Activate(keys)
}

// Now is the scheduler's clock (handle.clock, §15.5): real time when wasmsched runs a cluster, the
// simulated clock in a simulation. Plugins that keep time (backoffs, TTLs) read this, never
// time.Now, so a simulation reproduces them.
func Now() time.Time { return guest.Now() }
