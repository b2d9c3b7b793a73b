"""A plugin that reads watched objects (docs/abi.md §14.2) through the framework Handle, for the tests of
simulate and run: it declares the NodeResourceTopology CRD's resource and namespaces, and lets a pod onto a
node only when the node's NodeResourceTopology (same name) says `ok: true`."""

from __future__ import annotations

import json
from typing import Any

from wasmsched.api.gvr import GroupVersionResource
from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint
from wasmsched.framework.interface import EnqueueExtensions, FilterPlugin, Handle
from wasmsched.framework.status import Status

NRT = GroupVersionResource("topology.node.k8s.io", "v1alpha2", "noderesourcetopologies")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
PLUGIN = "TopologyMatch"

# A minimal valid CustomResourceDefinition of NodeResourceTopology (no schema for the objects).
NRT_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    # A group under k8s.io needs the approval annotation (the real CRD carries this one).
    "metadata": {"name": "noderesourcetopologies.topology.node.k8s.io",
                 "annotations": {"api-approved.kubernetes.io": "https://github.com/kubernetes/enhancements/pull/1178"}},
    "spec": {
        "group": "topology.node.k8s.io", "scope": "Cluster",
        "names": {"kind": "NodeResourceTopology", "plural": "noderesourcetopologies",
                  "singular": "noderesourcetopology", "listKind": "NodeResourceTopologyList"},
        "versions": [{"name": "v1alpha2", "served": True, "storage": True,
                      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}],
    },
}


def nrt(name: str, ok: bool, **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology", "metadata": meta,
            "zones": [{"name": "node-0", "type": "Node"}], "ok": ok}


class TopologyMatch(FilterPlugin, EnqueueExtensions):
    name = PLUGIN

    def __init__(self, handle: Handle, watch: tuple[GroupVersionResource, ...] = (NRT, NAMESPACES)) -> None:
        self.objects = handle.watched_objects(watch)

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        raw = self.objects.get(NRT, "", node_info.node.metadata.name)
        if raw is None:
            return Status.unschedulable("node has no NodeResourceTopology")
        if json.loads(raw).get("ok") is not True:
            return Status.unschedulable("NodeResourceTopology says no")
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(NRT.event_resource, ActionType.ADD | ActionType.UPDATE))]


def topology_factory(args: Any, handle: Handle) -> TopologyMatch:
    return TopologyMatch(handle)
