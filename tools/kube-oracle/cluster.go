package main

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/informers/internalinterfaces"
	resourceinformers "k8s.io/client-go/informers/resource/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// The fake API server side of the oracle. Two things the stock fake clientset lacks are added here:
//   - resourceVersions on stored objects: the scheduler ignores a pod update whose resourceVersion
//     equals the old one (a resync), so without them every status write to a pending pod would be lost;
//   - a count of the watch events it emits for pods and nodes, and of the handler calls the informers
//     made for them, so the driver can wait until every event a step caused has been handled
//     ("quiescent") instead of sleeping.

// watched are the resources whose events reach scheduler handlers that change its state. The DRA kinds
// feed caches of their own (the claim assume cache, the slice tracker, the extended resource cache) from
// their informers' handlers, which an informer's HasSynced does not wait for: without counting them a
// cycle could run before a claim reached the assume cache, or before PreBind's claim update requeued a pod.
// The storage kinds feed VolumeBinding's PV and PVC assume caches and the queue: an initial-list
// PersistentVolume Add handled while the first pod is in flight sends that pod to backoffQ for one
// attempt more, and PreBind's PV/PVC writes requeue pods.
var watched = map[string]bool{"pods": true, "nodes": true, "resourceclaims": true, "resourceslices": true,
	"deviceclasses": true, "persistentvolumes": true, "persistentvolumeclaims": true, "storageclasses": true,
	"csinodes": true, "csidrivers": true, "csistoragecapacities": true, "volumeattachments": true}

// counts pairs events emitted with handler calls made, per resource.
type counts struct {
	mu      sync.Mutex
	emitted map[string]int64
	handled map[string][]*int64 // one counter per registered handler
	// the registrations of those handlers: a handler has returned from its last initial-list call a
	// moment before its registration reports HasSynced
	registrations []cache.ResourceEventHandlerRegistration
	changed       chan struct{}
	sequence      int64 // resourceVersion source
}

func newCounts() *counts {
	return &counts{emitted: map[string]int64{}, handled: map[string][]*int64{}, changed: make(chan struct{}, 1)}
}

func (c *counts) notify() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *counts) emit(resource string) {
	if !watched[resource] {
		return
	}
	c.mu.Lock()
	c.emitted[resource]++
	c.mu.Unlock()
}

func (c *counts) newHandlerCounter(resource string) *int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := new(int64)
	c.handled[resource] = append(c.handled[resource], n)
	return n
}

func (c *counts) handledOne(n *int64) {
	c.mu.Lock()
	*n++
	c.mu.Unlock()
	c.notify()
}

func (c *counts) nextResourceVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sequence++
	return strconv.FormatInt(c.sequence, 10)
}

// quiet reports whether every handler has handled every event emitted for its resource and has synced.
func (c *counts) quiet() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.registrations {
		if !r.HasSynced() {
			return false
		}
	}
	for resource, handlers := range c.handled {
		for _, n := range handlers {
			if *n < c.emitted[resource] {
				return false
			}
		}
	}
	return true
}

// waitQuiet waits until quiet() or the timeout.
func (c *counts) waitQuiet(timeout time.Duration, more func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if c.quiet() && (more == nil || more()) {
			return nil
		}
		select {
		case <-c.changed:
		case <-time.After(time.Millisecond):
		case <-deadline.C:
			return fmt.Errorf("scheduler did not settle within %v (events emitted %v)", timeout, c.snapshot())
		}
	}
}

func (c *counts) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int64{}
	for k, v := range c.emitted {
		out[k] = v
	}
	return out
}

// tracker stamps resourceVersions and counts emitted events; the stored objects live in the wrapped tracker.
type tracker struct {
	clienttesting.ObjectTracker
	counts *counts
}

func (t *tracker) stamp(obj runtime.Object) (runtime.Object, error) {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion(t.counts.nextResourceVersion())
	return obj, nil
}

func resourceOf(obj runtime.Object) string {
	gvks, _, err := clientscheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return ""
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvks[0])
	return gvr.Resource
}

func (t *tracker) Add(obj runtime.Object) error {
	obj, err := t.stamp(obj)
	if err != nil {
		return err
	}
	if err := t.ObjectTracker.Add(obj); err != nil {
		return err
	}
	t.counts.emit(resourceOf(obj))
	return nil
}

func (t *tracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	obj, err := t.stamp(obj)
	if err != nil {
		return err
	}
	if err := t.ObjectTracker.Create(gvr, obj, ns, opts...); err != nil {
		return err
	}
	t.counts.emit(gvr.Resource)
	return nil
}

func (t *tracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	obj, err := t.stamp(obj)
	if err != nil {
		return err
	}
	if err := t.ObjectTracker.Update(gvr, obj, ns, opts...); err != nil {
		return err
	}
	t.counts.emit(gvr.Resource)
	return nil
}

func (t *tracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	// obj is the tracker's patched copy; the caller reads the stamped version back from it.
	m.SetResourceVersion(t.counts.nextResourceVersion())
	if err := t.ObjectTracker.Patch(gvr, obj, ns, opts...); err != nil {
		return err
	}
	t.counts.emit(gvr.Resource)
	return nil
}

func (t *tracker) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	if err := t.ObjectTracker.Delete(gvr, ns, name, opts...); err != nil {
		return err
	}
	t.counts.emit(gvr.Resource)
	return nil
}

// newClientset is fake.NewSimpleClientset with the tracker above in front of the object store.
func newClientset(c *counts) (*fake.Clientset, *tracker) {
	cs := fake.NewSimpleClientset()
	t := &tracker{ObjectTracker: clienttesting.NewObjectTracker(clientscheme.Scheme, clientscheme.Codecs.UniversalDecoder()), counts: c}
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

// countingInformer counts the calls each registered handler has finished.
type countingInformer struct {
	cache.SharedIndexInformer
	resource string
	counts   *counts
}

type countingHandler struct {
	inner cache.ResourceEventHandler
	n     *int64
	c     *counts
}

func (h countingHandler) OnAdd(obj any, isInInitialList bool) {
	defer h.c.handledOne(h.n)
	h.inner.OnAdd(obj, isInInitialList)
}

func (h countingHandler) OnUpdate(oldObj, newObj any) {
	defer h.c.handledOne(h.n)
	h.inner.OnUpdate(oldObj, newObj)
}

func (h countingHandler) OnDelete(obj any) {
	defer h.c.handledOne(h.n)
	h.inner.OnDelete(obj)
}

func (i *countingInformer) wrap(h cache.ResourceEventHandler) cache.ResourceEventHandler {
	return countingHandler{inner: h, n: i.counts.newHandlerCounter(i.resource), c: i.counts}
}

func (i *countingInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.registered(i.SharedIndexInformer.AddEventHandler(i.wrap(h)))
}

func (i *countingInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.registered(i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(i.wrap(h), resync))
}

func (i *countingInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, opts cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.registered(i.SharedIndexInformer.AddEventHandlerWithOptions(i.wrap(h), opts))
}

func (i *countingInformer) registered(r cache.ResourceEventHandlerRegistration, err error) (cache.ResourceEventHandlerRegistration, error) {
	if err == nil {
		i.counts.mu.Lock()
		i.counts.registrations = append(i.counts.registrations, r)
		i.counts.mu.Unlock()
	}
	return r, err
}

// newInformerFactory is scheduler.NewInformerFactory (its pod informer sees only non-terminal pods and
// drops managedFields) with counting informers for pods, nodes, the DRA kinds and the storage kinds.
func newInformerFactory(cs clientset.Interface, c *counts) informers.SharedInformerFactory {
	f := informers.NewSharedInformerFactory(cs, 0)
	f.InformerFor(&corev1.Pod{}, func(cs clientset.Interface, resync time.Duration) cache.SharedIndexInformer {
		selector := fmt.Sprintf("status.phase!=%v,status.phase!=%v", corev1.PodSucceeded, corev1.PodFailed)
		inf := coreinformers.NewPodInformerWithOptions(cs, metav1.NamespaceAll, internalinterfaces.InformerOptions{
			ResyncPeriod:     resync,
			Indexers:         cache.Indexers{},
			TweakListOptions: func(o *metav1.ListOptions) { o.FieldSelector = selector },
		})
		_ = inf.SetTransform(func(obj any) (any, error) {
			if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
				m.SetManagedFields(nil)
			}
			return obj, nil
		})
		return &countingInformer{SharedIndexInformer: inf, resource: "pods", counts: c}
	})
	// a map of its own for each: AddIndexers (the slice tracker's) adds to the map the store was given
	namespaced := func() cache.Indexers { return cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc} }
	counted := func(obj runtime.Object, resource string, build func(clientset.Interface, time.Duration) cache.SharedIndexInformer) {
		f.InformerFor(obj, func(cs clientset.Interface, resync time.Duration) cache.SharedIndexInformer {
			return &countingInformer{SharedIndexInformer: build(cs, resync), resource: resource, counts: c}
		})
	}
	type newClusterScoped func(clientset.Interface, time.Duration, cache.Indexers, internalinterfaces.TweakListOptionsFunc) cache.SharedIndexInformer
	type newNamespaced func(clientset.Interface, string, time.Duration, cache.Indexers, internalinterfaces.TweakListOptionsFunc) cache.SharedIndexInformer
	clusterScoped := func(obj runtime.Object, resource string, build newClusterScoped) {
		counted(obj, resource, func(cs clientset.Interface, r time.Duration) cache.SharedIndexInformer {
			return build(cs, r, namespaced(), nil)
		})
	}
	inNamespaces := func(obj runtime.Object, resource string, build newNamespaced) {
		counted(obj, resource, func(cs clientset.Interface, r time.Duration) cache.SharedIndexInformer {
			return build(cs, metav1.NamespaceAll, r, namespaced(), nil)
		})
	}
	clusterScoped(&corev1.Node{}, "nodes", coreinformers.NewFilteredNodeInformer)
	inNamespaces(&resourcev1.ResourceClaim{}, "resourceclaims", resourceinformers.NewFilteredResourceClaimInformer)
	clusterScoped(&resourcev1.ResourceSlice{}, "resourceslices", resourceinformers.NewFilteredResourceSliceInformer)
	clusterScoped(&resourcev1.DeviceClass{}, "deviceclasses", resourceinformers.NewFilteredDeviceClassInformer)
	clusterScoped(&corev1.PersistentVolume{}, "persistentvolumes", coreinformers.NewFilteredPersistentVolumeInformer)
	inNamespaces(&corev1.PersistentVolumeClaim{}, "persistentvolumeclaims", coreinformers.NewFilteredPersistentVolumeClaimInformer)
	clusterScoped(&storagev1.StorageClass{}, "storageclasses", storageinformers.NewFilteredStorageClassInformer)
	clusterScoped(&storagev1.CSINode{}, "csinodes", storageinformers.NewFilteredCSINodeInformer)
	clusterScoped(&storagev1.CSIDriver{}, "csidrivers", storageinformers.NewFilteredCSIDriverInformer)
	inNamespaces(&storagev1.CSIStorageCapacity{}, "csistoragecapacities", storageinformers.NewFilteredCSIStorageCapacityInformer)
	clusterScoped(&storagev1.VolumeAttachment{}, "volumeattachments", storageinformers.NewFilteredVolumeAttachmentInformer)
	return f
}
