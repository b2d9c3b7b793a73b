"""The API resources wasmsched knows: kind -> REST path and protobuf message classes (what `run` watches,
`snapshot` writes and `simulate` applies, in that order)."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import Message

from wasmsched.api.types import KIND_TYPES


@dataclass(frozen=True)
class Resource:
    kind: str
    group_version: str  # "v1", "apps/v1", ...
    plural: str
    namespaced: bool

    @property
    def message_class(self) -> type[Message]:
        return KIND_TYPES[(self.group_version, self.kind)]

    @property
    def list_class(self) -> type[Message]:
        return KIND_TYPES[(self.group_version, self.kind + "List")]

    @property
    def group_resource(self) -> str:
        """The resource as API errors name it: "pods", "storageclasses.storage.k8s.io"."""
        group = self.group_version.rpartition("/")[0]
        return f"{self.plural}.{group}" if group else self.plural

    def path(self, namespace: str = "", name: str = "", subresource: str = "") -> str:
        """The REST path: /api/v1/... for the core group, /apis/<group>/<version>/... for the others."""
        base = "/api/v1" if self.group_version == "v1" else f"/apis/{self.group_version}"
        parts = [base]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{namespace}")
        parts.append(self.plural)
        if name:
            parts.append(name)
        if subresource:
            parts.append(subresource)
        return "/".join(parts)

    def available(self) -> bool:
        """Whether wasmsched has the generated message classes for it."""
        return (self.group_version, self.kind) in KIND_TYPES and (self.group_version, self.kind + "List") in KIND_TYPES


def _r(kind: str, gv: str, plural: str, namespaced: bool) -> Resource:
    return Resource(kind, gv, plural, namespaced)


# Everything `run` may watch and `snapshot` writes, in the order `simulate` applies them.
RESOURCES: dict[str, Resource] = {
    r.kind: r
    for r in [
        _r("Namespace", "v1", "namespaces", False),
        _r("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False),
        _r("Node", "v1", "nodes", False),
        _r("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True),
        _r("StorageClass", "storage.k8s.io/v1", "storageclasses", False),
        _r("CSINode", "storage.k8s.io/v1", "csinodes", False),
        _r("CSIDriver", "storage.k8s.io/v1", "csidrivers", False),
        _r("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities", True),
        _r("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments", False),
        _r("DeviceClass", "resource.k8s.io/v1", "deviceclasses", False),
        _r("ResourceSlice", "resource.k8s.io/v1", "resourceslices", False),
        _r("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates", True),
        _r("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", True),
        _r("PersistentVolume", "v1", "persistentvolumes", False),
        _r("PersistentVolumeClaim", "v1", "persistentvolumeclaims", True),
        _r("Service", "v1", "services", True),
        _r("ReplicationController", "v1", "replicationcontrollers", True),
        _r("ReplicaSet", "apps/v1", "replicasets", True),
        _r("StatefulSet", "apps/v1", "statefulsets", True),
        _r("Pod", "v1", "pods", True),
    ]
}
