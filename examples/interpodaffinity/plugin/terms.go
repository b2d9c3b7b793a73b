package plugin

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/wasmsched/wasmsched/sdk/go/api"
)

// The parsed affinity terms of a pod, ported from k8s.io/kube-scheduler/framework (AffinityTerm,
// GetAffinityTerms, …) and k8s.io/kubernetes/pkg/scheduler/framework (NewPodInfo), v1.37.2. kube's
// PodInfo parses them once per pod version; here podInfo does, cached per api.PodInfo (the SDK's
// mirror hands out one PodInfo per pod version).

// AffinityTerm is a processed v1.PodAffinityTerm.
type AffinityTerm struct {
	Namespaces        sets.Set[string]
	Selector          labels.Selector
	TopologyKey       string
	NamespaceSelector labels.Selector
}

// Matches returns true if the pod matches the label selector and namespaces or namespace selector.
func (at *AffinityTerm) Matches(pod *corev1.Pod, nsLabels labels.Set) bool {
	if at.Namespaces.Has(pod.Namespace) || at.NamespaceSelector.Matches(nsLabels) {
		return at.Selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

// WeightedAffinityTerm is a processed v1.WeightedPodAffinityTerm.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

func getAffinityTerms(pod *corev1.Pod, v1Terms []corev1.PodAffinityTerm) ([]AffinityTerm, error) {
	if v1Terms == nil {
		return nil, nil
	}
	var terms []AffinityTerm
	for i := range v1Terms {
		t, err := newAffinityTerm(pod, &v1Terms[i])
		if err != nil {
			return nil, err
		}
		terms = append(terms, *t)
	}
	return terms, nil
}

func getWeightedAffinityTerms(pod *corev1.Pod, v1Terms []corev1.WeightedPodAffinityTerm) ([]WeightedAffinityTerm, error) {
	if v1Terms == nil {
		return nil, nil
	}
	var terms []WeightedAffinityTerm
	for i := range v1Terms {
		t, err := newAffinityTerm(pod, &v1Terms[i].PodAffinityTerm)
		if err != nil {
			return nil, err
		}
		terms = append(terms, WeightedAffinityTerm{AffinityTerm: *t, Weight: v1Terms[i].Weight})
	}
	return terms, nil
}

func newAffinityTerm(pod *corev1.Pod, term *corev1.PodAffinityTerm) (*AffinityTerm, error) {
	selector, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		return nil, err
	}
	namespaces := sets.Set[string]{}
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		namespaces.Insert(pod.Namespace)
	} else {
		namespaces.Insert(term.Namespaces...)
	}
	nsSelector, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return nil, err
	}
	return &AffinityTerm{Namespaces: namespaces, Selector: selector, TopologyKey: term.TopologyKey,
		NamespaceSelector: nsSelector}, nil
}

func getPodAffinityTerms(affinity *corev1.Affinity) []corev1.PodAffinityTerm {
	if affinity != nil && affinity.PodAffinity != nil &&
		len(affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 {
		return affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

func getPodAntiAffinityTerms(affinity *corev1.Affinity) []corev1.PodAffinityTerm {
	if affinity != nil && affinity.PodAntiAffinity != nil &&
		len(affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 {
		return affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// podInfo is kube's framework.PodInfo for what this plugin reads: the pod and its parsed terms.
type podInfo struct {
	pod                        *corev1.Pod
	requiredAffinityTerms      []AffinityTerm
	requiredAntiAffinityTerms  []AffinityTerm
	preferredAffinityTerms     []WeightedAffinityTerm
	preferredAntiAffinityTerms []WeightedAffinityTerm
}

func (pi *podInfo) GetPod() *corev1.Pod                          { return pi.pod }
func (pi *podInfo) GetRequiredAffinityTerms() []AffinityTerm     { return pi.requiredAffinityTerms }
func (pi *podInfo) GetRequiredAntiAffinityTerms() []AffinityTerm { return pi.requiredAntiAffinityTerms }
func (pi *podInfo) GetPreferredAffinityTerms() []WeightedAffinityTerm {
	return pi.preferredAffinityTerms
}
func (pi *podInfo) GetPreferredAntiAffinityTerms() []WeightedAffinityTerm {
	return pi.preferredAntiAffinityTerms
}

// newPodInfo is kube's framework.NewPodInfo: the terms that parse, and the errors of those that do not.
func newPodInfo(pod *corev1.Pod) (*podInfo, error) {
	if pod == nil {
		return nil, fmt.Errorf("pod cannot be nil")
	}
	pInfo := &podInfo{pod: pod}
	var preferredAffinityTerms, preferredAntiAffinityTerms []corev1.WeightedPodAffinityTerm
	if affinity := pod.Spec.Affinity; affinity != nil {
		if a := affinity.PodAffinity; a != nil {
			preferredAffinityTerms = a.PreferredDuringSchedulingIgnoredDuringExecution
		}
		if a := affinity.PodAntiAffinity; a != nil {
			preferredAntiAffinityTerms = a.PreferredDuringSchedulingIgnoredDuringExecution
		}
	}
	var parseErrs []error
	var err error
	if pInfo.requiredAffinityTerms, err = getAffinityTerms(pod, getPodAffinityTerms(pod.Spec.Affinity)); err != nil {
		parseErrs = append(parseErrs, fmt.Errorf("requiredAffinityTerms: %w", err))
	}
	if pInfo.requiredAntiAffinityTerms, err = getAffinityTerms(pod, getPodAntiAffinityTerms(pod.Spec.Affinity)); err != nil {
		parseErrs = append(parseErrs, fmt.Errorf("requiredAntiAffinityTerms: %w", err))
	}
	if pInfo.preferredAffinityTerms, err = getWeightedAffinityTerms(pod, preferredAffinityTerms); err != nil {
		parseErrs = append(parseErrs, fmt.Errorf("preferredAffinityTerms: %w", err))
	}
	if pInfo.preferredAntiAffinityTerms, err = getWeightedAffinityTerms(pod, preferredAntiAffinityTerms); err != nil {
		parseErrs = append(parseErrs, fmt.Errorf("preferredAntiAffinityTerms: %w", err))
	}
	return pInfo, aggregate(parseErrs)
}

// aggregate joins errors as utilerrors.NewAggregate does ("[a, b]" for several), without pulling
// k8s.io/apimachinery/pkg/util/errors's dependencies into the guest.
func aggregate(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msg := "["
	for i, e := range errs {
		if i > 0 {
			msg += ", "
		}
		msg += e.Error()
	}
	return errors.New(msg + "]")
}

// maxCachedTerms bounds the cache of existing pods' terms: it is dropped when it grows past this
// (pods that left or changed keep their entries until then).
const maxCachedTerms = 50000

// existing returns the parsed terms of a pod of the snapshot. kube parses them when the pod enters
// the cache and, for a pod whose terms do not parse, keeps those that do; so does this.
func (pl *InterPodAffinity) existing(pi api.PodInfo) *podInfo {
	if p, ok := pl.terms[pi]; ok {
		return p
	}
	if len(pl.terms) >= maxCachedTerms {
		pl.terms = map[api.PodInfo]*podInfo{}
	}
	p, _ := newPodInfo(pi.Pod())
	pl.terms[pi] = p
	return p
}
