package plugin

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	topologyv1alpha2 "github.com/k8stopologyawareschedwg/noderesourcetopology-api/pkg/apis/topology/v1alpha2"

	"github.com/wasmsched/wasmsched/sdk/go/handle"
	"github.com/wasmsched/wasmsched/sdk/go/klog"
)

// CachedNRTInfo is upstream's cache.CachedNRTInfo (the field read here).
type CachedNRTInfo struct {
	Fresh bool
}

// passthrough is upstream's cache.Passthrough (pkg/noderesourcetopology/cache/passthrough.go), the
// cache upstream uses when cacheResyncPeriodSeconds is unset: every call gets the node's
// NodeResourceTopology as it is now, trusting its `available` values. Upstream reads it with a
// controller-runtime client into the typed struct; here it comes from the host's watched objects
// (handle.Objects, docs/abi.md §14.2) as unstructured JSON, converted into the same typed struct of
// github.com/k8stopologyawareschedwg/noderesourcetopology-api.
type passthrough struct {
	lister handle.ObjectLister
}

func (pt passthrough) GetCachedNRTCopy(nodeName string, _ *corev1.Pod) (*topologyv1alpha2.NodeResourceTopology, CachedNRTInfo) {
	info := CachedNRTInfo{Fresh: true}
	u, err := pt.lister.Get("", nodeName)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			klog.ErrorS(err, "cannot get nrts from lister", "node", nodeName)
		}
		return nil, info
	}
	nrt := &topologyv1alpha2.NodeResourceTopology{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), nrt); err != nil {
		// upstream's client fails to decode such an object the same way: no NRT for the node.
		klog.ErrorS(err, "cannot decode the NodeResourceTopology", "node", nodeName)
		return nil, info
	}
	return nrt, info
}
