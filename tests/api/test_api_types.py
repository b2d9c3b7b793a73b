"""The kind registry and object keys."""

from wasmsched.api.convert import message_to_dict
from wasmsched.api.types import (
    KIND_TYPES,
    NAMESPACED_KINDS,
    Node,
    Pod,
    PriorityClass,
    object_key,
    pod_key,
    type_meta,
)


def test_kind_registry() -> None:
    assert KIND_TYPES[("v1", "Pod")] is Pod
    assert KIND_TYPES[("scheduling.k8s.io/v1", "PriorityClass")] is PriorityClass
    for _, kind in KIND_TYPES:
        assert (
            kind.endswith("List")
            or kind in NAMESPACED_KINDS
            or kind in {"Node", "Namespace", "PersistentVolume", "PriorityClass", "StorageClass", "CSINode",
                        "CSIDriver", "VolumeAttachment", "DeviceClass", "ResourceSlice", "Binding"}
        )
    # The REST table and the manifest loader agree on which kinds live in a namespace.
    from wasmsched.api.kinds import RESOURCES

    for kind, resource in RESOURCES.items():
        assert resource.namespaced == (kind in NAMESPACED_KINDS), kind
    assert type_meta(Node()) == ("v1", "Node")
    assert type_meta(Pod().spec) is None


def test_keys() -> None:
    pod = Pod()
    pod.metadata.name = "web"
    pod.metadata.namespace = "shop"
    assert pod_key(pod) == "shop/web"
    assert object_key(pod) == "shop/web"
    node = Node()
    node.metadata.name = "n1"
    assert object_key(node) == "n1"
    assert message_to_dict(node) == {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
