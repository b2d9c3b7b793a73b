"""api/gvr.py: GroupVersionResource's names and paths, and meta.UnsafeGuessKindToResource."""

from __future__ import annotations

import pytest

from wasmsched.api.gvr import GroupVersionResource, parse_resource_arg, split_api_version, unsafe_guess_kind_to_resource


@pytest.mark.parametrize(("kind", "plural", "singular"), [
    # restmapper_test.go TestUnsafeGuessKindToResource's cases
    ("", "", ""),
    ("Pod", "pods", "pod"),
    ("ReplicationController", "replicationcontrollers", "replicationcontroller"),
    ("ImageRepository", "imagerepositories", "imagerepository"),
    ("miss", "misses", "miss"),
    ("Endpoints", "endpoints", "endpoints"),
    ("NodeResourceTopology", "noderesourcetopologies", "noderesourcetopology"),
    ("Policy", "policies", "policy"),
    ("Status", "statuses", "status"),
    ("MyEndpoints", "myendpoints", "myendpoints"),
    ("Ingress", "ingresses", "ingress"),
])
def test_unsafe_guess_kind_to_resource(kind: str, plural: str, singular: str) -> None:
    assert unsafe_guess_kind_to_resource(kind) == (plural, singular)


def test_names_and_paths() -> None:
    nrt = GroupVersionResource("topology.node.k8s.io", "v1alpha2", "noderesourcetopologies")
    assert nrt.event_resource == str(nrt) == "noderesourcetopologies.v1alpha2.topology.node.k8s.io"
    assert nrt.group_resource == "noderesourcetopologies.topology.node.k8s.io"
    assert nrt.group_version == "topology.node.k8s.io/v1alpha2"
    assert nrt.path() == "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"
    assert nrt.path("ns", "a") == "/apis/topology.node.k8s.io/v1alpha2/namespaces/ns/noderesourcetopologies/a"
    ns = GroupVersionResource("", "v1", "namespaces")
    assert ns.event_resource == "namespaces.v1."
    assert ns.group_resource == "namespaces" and ns.group_version == "v1"
    assert ns.path() == "/api/v1/namespaces" and ns.path(name="x") == "/api/v1/namespaces/x"


def test_event_resource_reads_back_as_schema_parse_resource_arg_does() -> None:
    for gvr in (GroupVersionResource("topology.node.k8s.io", "v1alpha2", "noderesourcetopologies"),
                GroupVersionResource("", "v1", "namespaces"), GroupVersionResource("a.b.c", "v1beta1", "bars")):
        assert parse_resource_arg(gvr.event_resource) == gvr
    assert parse_resource_arg("foos.v1") is None
    assert split_api_version("v1") == ("", "v1") and split_api_version("apps/v1") == ("apps", "v1")
