//go:build !wasip1

package plugin

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyv1alpha2 "github.com/k8stopologyawareschedwg/noderesourcetopology-api/pkg/apis/topology/v1alpha2"

	"github.com/wasmsched/wasmsched/sdk/go/api"
	"github.com/wasmsched/wasmsched/sdk/go/handle"
	"github.com/wasmsched/wasmsched/sdk/go/hosttest"
)

// Upstream's tests build the plugin on a controller-runtime fake client holding the NRT objects
// and call Filter/Score with a framework.NodeInfo of the node. Here the objects are the fake host's
// watched objects (JSON, as wasmsched serves them, docs/abi.md §14.2) and the node is a snapshot
// node (§14.1), so the plugin reads both through the SDK as it does in a guest.

const nrtKey = "topology.node.k8s.io/v1alpha2/noderesourcetopologies"

// installHost makes a fake host serving the NRT objects and a snapshot of the nodes.
func installHost(t *testing.T, nrts []*topologyv1alpha2.NodeResourceTopology, nodes ...*v1.Node) *hosttest.Host {
	t.Helper()
	h := hosttest.Install(t, &hosttest.Host{Objects: map[string][][]byte{nrtKey: nil}})
	for _, nrt := range nrts {
		obj := nrt.DeepCopy()
		obj.TypeMeta = metav1.TypeMeta{APIVersion: "topology.node.k8s.io/v1alpha2", Kind: "NodeResourceTopology"}
		h.Objects[nrtKey] = append(h.Objects[nrtKey], hosttest.Object(t, obj))
	}
	var sn []hosttest.SnapshotNode
	for _, n := range nodes {
		sn = append(sn, hosttest.SnapshotNode{Node: n, Allocatable: allocatableOf(n)})
	}
	hosttest.SetSnapshot(t, h, sn...)
	return h
}

// allocatableOf is kube's framework.NewResource(node.Status.Allocatable): the scalar resources
// (extended, hugepages) included, which the fake host leaves out by default.
func allocatableOf(n *v1.Node) *api.Resource {
	r := &api.Resource{ScalarResources: map[v1.ResourceName]int64{}}
	for name, q := range n.Status.Allocatable {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU = q.MilliValue()
		case v1.ResourceMemory:
			r.Memory = q.Value()
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage = q.Value()
		case v1.ResourcePods:
			r.AllowedPodNumber = int(q.Value())
		default:
			r.ScalarResources[name] = q.Value()
		}
	}
	return r
}

// snapshotNodeInfo is the SDK's NodeInfo of a snapshot node, as Filter and Score get it.
func snapshotNodeInfo(t *testing.T, name string) api.NodeInfo {
	t.Helper()
	ni, err := handle.SnapshotSharedLister().NodeInfos().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return ni
}

// setUp is the plugin as upstream's tests build it (the Passthrough cache over the objects) and the
// NodeInfo of node.
func setUp(t *testing.T, nrts []*topologyv1alpha2.NodeResourceTopology, node *v1.Node) (*TopologyMatch, api.NodeInfo) {
	t.Helper()
	installHost(t, nrts, node)
	tm := &TopologyMatch{nrtCache: passthrough{lister: handle.Objects(NodeResourceTopologies)}}
	return tm, snapshotNodeInfo(t, node.Name)
}

func parseState(error string) *api.Status {
	if len(error) == 0 {
		return nil
	}

	return api.NewStatus(api.Unschedulable, error)
}

// quasiEqualStatus is upstream's: the same code, and the message starts with the wanted one.
func quasiEqualStatus(s, x *api.Status) bool {
	if s == nil || x == nil {
		return s.IsSuccess() && x.IsSuccess()
	}
	if s.GetCode() != x.GetCode() {
		return false
	}
	return strings.HasPrefix(s.Message(), x.Message())
}
