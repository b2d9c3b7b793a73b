package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"k8s.io/apimachinery/pkg/util/sets"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	// The API server's defaulting functions of the kinds a case holds, registered into legacyscheme.
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	schedvalidation "k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

// Case is one decoded, defaulted cluster plus scheduler configuration.
type Case struct {
	// Objects in input order; pods without spec.nodeName are pending.
	Objects []runtime.Object
	Config  *schedconfig.KubeSchedulerConfiguration
}

// forcedPercentage: both sides evaluate every node (diff-contract.md, "A case").
var forcedPercentage int32 = 100

// Same as wasmsched/api/manifest.py, so a hand-written case gets the same UIDs and timestamps there.
var (
	uidNamespace          = uuid.MustParse("6f1c7c8e-2b0a-4c53-9a55-7a6d1f0e9b11")
	baseCreationTimestamp = time.Unix(1_704_067_200, 0).UTC()
	manifestSuffixes      = []string{".yaml", ".yml", ".json"}
)

// ReadManifests reads files and directories (recursively: *.yaml, *.yml, *.json in name order) into
// raw JSON documents, in order, and where each came from ("FILE: document N", for errors).
func ReadManifests(paths []string) ([]json.RawMessage, []string, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && hasManifestSuffix(path) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	var docs []json.RawMessage
	var sources []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		fileDocs, numbers, err := splitDocuments(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		docs = append(docs, fileDocs...)
		for _, n := range numbers {
			sources = append(sources, fmt.Sprintf("%s: document %d", f, n))
		}
	}
	return docs, sources, nil
}

func hasManifestSuffix(path string) bool {
	for _, s := range manifestSuffixes {
		if strings.HasSuffix(path, s) {
			return true
		}
	}
	return false
}

// splitDocuments turns multi-document YAML (or one JSON document) into JSON documents, skipping empty ones,
// and gives each one's number in the file (from 1).
func splitDocuments(data []byte) ([]json.RawMessage, []int, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []json.RawMessage
	var numbers []int
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, numbers, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := utilyaml.ToJSON(doc)
		if err != nil {
			return nil, nil, fmt.Errorf("document %d: %w", i, err)
		}
		if string(j) == "null" {
			continue
		}
		docs = append(docs, j)
		numbers = append(numbers, i)
	}
}

// DecodeCase decodes the objects (List kinds are flattened) and the configuration, and applies the
// defaulting the API server would apply on create. sources, when given, name where each document came
// from in errors (else "object N").
func DecodeCase(docs []json.RawMessage, sources []string, config json.RawMessage) (*Case, error) {
	c := &Case{}
	for i, doc := range docs {
		objs, err := decodeObject(doc)
		if err != nil {
			where := fmt.Sprintf("object %d", i)
			if i < len(sources) {
				where = sources[i]
			}
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		c.Objects = append(c.Objects, objs...)
	}
	if err := defaultObjects(c.Objects); err != nil {
		return nil, err
	}
	cfg, err := DecodeConfig(config)
	if err != nil {
		return nil, err
	}
	c.Config = cfg
	return c, nil
}

func decodeObject(doc []byte) ([]runtime.Object, error) {
	obj, gvk, err := clientscheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
	if err != nil {
		return nil, err
	}
	if list, ok := obj.(*metav1.List); ok {
		var out []runtime.Object
		for i, item := range list.Items {
			objs, err := decodeObject(item.Raw)
			if err != nil {
				return nil, fmt.Errorf("%s item %d: %w", gvk.Kind, i, err)
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, err
		}
		return items, nil
	}
	return []runtime.Object{obj}, nil
}

// defaultObjects fills metadata (namespace, uid, creationTimestamp) as wasmsched's loader does, runs the
// API server's defaulting functions and resolves pod priorities as the Priority admission plugin does.
func defaultObjects(objs []runtime.Object) error {
	classes := map[string]*schedulingv1.PriorityClass{}
	var globalDefault *schedulingv1.PriorityClass
	for i, obj := range objs {
		gvk, err := objectKind(obj)
		if err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return fmt.Errorf("object %d (%s): %w", i, gvk.Kind, err)
		}
		if m.GetName() == "" {
			return fmt.Errorf("object %d (%s): metadata.name is required", i, gvk.Kind)
		}
		namespaced := isNamespaced(gvk.Kind)
		switch {
		case namespaced && m.GetNamespace() == "":
			m.SetNamespace(metav1.NamespaceDefault)
		case !namespaced:
			m.SetNamespace("")
		}
		if m.GetUID() == "" {
			m.SetUID(types.UID(uuid.NewSHA1(uidNamespace, []byte(gvk.Kind+"/"+m.GetNamespace()+"/"+m.GetName())).String()))
		}
		if ts := m.GetCreationTimestamp(); ts.IsZero() {
			m.SetCreationTimestamp(metav1.NewTime(baseCreationTimestamp.Add(time.Duration(i) * time.Second)))
		}
		legacyscheme.Scheme.Default(obj)
		if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
			classes[pc.Name] = pc
			if pc.GlobalDefault && (globalDefault == nil || pc.Value < globalDefault.Value) {
				globalDefault = pc
			}
		}
	}
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok {
			prepareForCreate(pod)
			if err := admitPriority(pod, classes, globalDefault); err != nil {
				return fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
			}
		}
	}
	return nil
}

func objectKind(obj runtime.Object) (gvkT, error) {
	gvks, _, err := clientscheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return gvkT{}, fmt.Errorf("unknown kind %T", obj)
	}
	return gvkT{Kind: gvks[0].Kind, GroupVersion: gvks[0].GroupVersion().String()}, nil
}

type gvkT struct{ Kind, GroupVersion string }

var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PriorityClass": true, "PersistentVolume": true, "StorageClass": true,
	"CSINode": true, "CSIDriver": true, "VolumeAttachment": true, "DeviceClass": true, "ResourceSlice": true,
}

func isNamespaced(kind string) bool { return !clusterScoped[kind] }

// admitPriority is plugin/pkg/admission/priority's admitPod on create: the class named by
// priorityClassName (or the global default one) gives spec.priority and spec.preemptionPolicy.
func admitPriority(pod *corev1.Pod, classes map[string]*schedulingv1.PriorityClass, globalDefault *schedulingv1.PriorityClass) error {
	var priority int32
	var policy *corev1.PreemptionPolicy
	name := pod.Spec.PriorityClassName
	switch {
	case name == "" && globalDefault != nil:
		name, priority, policy = globalDefault.Name, globalDefault.Value, globalDefault.PreemptionPolicy
	case name == "":
		priority = scheduling.DefaultPriorityWhenNoDefaultClassExists
	default:
		pc, ok := classes[name]
		if !ok {
			pc = systemPriorityClass(name)
		}
		if pc == nil {
			return fmt.Errorf("spec.priorityClassName: no PriorityClass with name %s was found", name)
		}
		priority, policy = pc.Value, pc.PreemptionPolicy
	}
	pod.Spec.PriorityClassName = name
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return fmt.Errorf("spec.priority: the integer value of priority (%d) must not be provided in pod spec; "+
			"priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority)
	}
	pod.Spec.Priority = &priority
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return fmt.Errorf("spec.preemptionPolicy: the string value of PreemptionPolicy (%s) must not be provided in pod spec; "+
				"priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy)
		}
		p := *policy
		pod.Spec.PreemptionPolicy = &p
	}
	return nil
}

// systemPriorityClass is one of the classes the API server creates itself, or nil.
func systemPriorityClass(name string) *schedulingv1.PriorityClass {
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		if pc.Name == name {
			pc = pc.DeepCopy()
			legacyscheme.Scheme.Default(pc)
			return pc
		}
	}
	return nil
}

var (
	defaultConfigOnce sync.Once
	defaultConfig     *schedconfig.KubeSchedulerConfiguration
	defaultConfigErr  error
)

// DecodeConfig decodes a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration (JSON; null or empty
// for the default) with the scheduler's scheme (defaulting), validates it as kube-scheduler does and
// forces percentageOfNodesToScore to 100. The default configuration is decoded once per process.
func DecodeConfig(raw json.RawMessage) (*schedconfig.KubeSchedulerConfiguration, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		defaultConfigOnce.Do(func() {
			defaultConfig, defaultConfigErr = decodeConfig([]byte(`{}`))
		})
		if defaultConfigErr != nil {
			return nil, defaultConfigErr
		}
		return defaultConfig.DeepCopy(), nil
	}
	return decodeConfig(trimmed)
}

func decodeConfig(data []byte) (*schedconfig.KubeSchedulerConfiguration, error) {
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if fields == nil {
		return nil, errors.New("config: not a JSON object")
	}
	// Written by hand or by a generator, the type fields are easy to forget; they are not a choice.
	if _, ok := fields["apiVersion"]; !ok {
		fields["apiVersion"] = "kubescheduler.config.k8s.io/v1"
	}
	if _, ok := fields["kind"]; !ok {
		fields["kind"] = "KubeSchedulerConfiguration"
	}
	data, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	obj, gvk, err := schedscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("config: got %s, want KubeSchedulerConfiguration", gvk)
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if len(cfg.Extenders) > 0 {
		return nil, errors.New("config: extenders: only in-tree plugins are supported")
	}
	cfg.PercentageOfNodesToScore = &forcedPercentage
	for i := range cfg.Profiles {
		p := forcedPercentage
		cfg.Profiles[i].PercentageOfNodesToScore = &p
	}
	if errs := schedvalidation.ValidateKubeSchedulerConfiguration(cfg); errs != nil {
		return nil, fmt.Errorf("config: %w", errs)
	}
	return cfg, nil
}

// prepareForCreate is what the API server's pod strategy (pkg/registry/core/pod/strategy.go,
// PrepareForCreate) changes in a pod it creates and the scheduler depends on: the label keys of pod
// (anti-)affinity terms and topology spread constraints merged into their label selectors
// (mutatePodAffinity, mutateTopologySpreadConstraints; both feature gates are on in 1.37). The
// strategy is written against the internal API types, so its few lines are repeated here for v1.
func prepareForCreate(pod *corev1.Pod) {
	if aff := pod.Spec.Affinity; aff != nil {
		if a := aff.PodAffinity; a != nil {
			applyTerms(a.RequiredDuringSchedulingIgnoredDuringExecution, a.PreferredDuringSchedulingIgnoredDuringExecution, pod.Labels)
		}
		if anti := aff.PodAntiAffinity; anti != nil {
			applyTerms(anti.RequiredDuringSchedulingIgnoredDuringExecution, anti.PreferredDuringSchedulingIgnoredDuringExecution, pod.Labels)
		}
	}
	for i := range pod.Spec.TopologySpreadConstraints {
		c := &pod.Spec.TopologySpreadConstraints[i]
		if len(c.MatchLabelKeys) > 0 && c.LabelSelector != nil {
			applyLabelKeys(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn, pod.Labels)
		}
	}
}

func applyTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, labels map[string]string) {
	for i := range preferred {
		applyMatchAndMismatchLabelKeys(&preferred[i].PodAffinityTerm, labels)
	}
	for i := range required {
		applyMatchAndMismatchLabelKeys(&required[i], labels)
	}
}

func applyMatchAndMismatchLabelKeys(term *corev1.PodAffinityTerm, labels map[string]string) {
	if (len(term.MatchLabelKeys) == 0 && len(term.MismatchLabelKeys) == 0) || term.LabelSelector == nil {
		return // a nil selector matches nothing, and stays so
	}
	applyLabelKeys(term.LabelSelector, term.MatchLabelKeys, metav1.LabelSelectorOpIn, labels)
	applyLabelKeys(term.LabelSelector, term.MismatchLabelKeys, metav1.LabelSelectorOpNotIn, labels)
}

func applyLabelKeys(selector *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator, labels map[string]string) {
	for _, key := range keys {
		if value, ok := labels[key]; ok {
			selector.MatchExpressions = append(selector.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: []string{value}})
		}
	}
}

// RestrictPlugins removes from every profile, at every extension point, the plugins not in allowed (nil:
// keep all). The differential harness passes the plugins wasmsched has, so that kube's default profile
// is compared without the plugins wasmsched has not ported yet (docs/compatibility.md).
func RestrictPlugins(cfg *schedconfig.KubeSchedulerConfiguration, allowed []string) {
	if allowed == nil {
		return
	}
	keep := sets.New(allowed...)
	for i := range cfg.Profiles {
		p := cfg.Profiles[i].Plugins
		if p == nil {
			continue
		}
		for _, set := range []*schedconfig.PluginSet{
			&p.PreEnqueue, &p.QueueSort, &p.PreFilter, &p.Filter, &p.PostFilter, &p.PreScore, &p.Score,
			&p.Reserve, &p.Permit, &p.PreBind, &p.Bind, &p.PostBind, &p.MultiPoint,
			&p.PlacementGenerate, &p.PlacementScore, &p.PodGroupPostFilter,
		} {
			enabled := set.Enabled[:0:0]
			for _, pl := range set.Enabled {
				if keep.Has(pl.Name) {
					enabled = append(enabled, pl)
				}
			}
			set.Enabled = enabled
		}
	}
}
