"""The declared features registered in kube 1.37 (component-helpers nodedeclaredfeatures/features/
registry.go's AllFeatures) and their logic, one class per feature package.

Of the nine, three can make a pod need a feature to be scheduled: RestartAllContainersOnContainerExits
(a container restart rule with action RestartAllContainers), UserNamespacesHostNetworkSupport
(hostNetwork with hostUsers false) and VolumeBindMountOptions (a volume mount with bindMountOptions).
The in-place resize ones matter only to pod updates; the rest to neither (DRAOptionalNodeOperations is
checked by the DynamicResources plugin itself, once a claim is allocated). None has a MaxVersion in
1.37, so the scheduler's version never drops a requirement.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from wasmsched.api.quantity import cached_quantity
from wasmsched.api.types import Container, ResourceRequirements
from wasmsched.plugins.nodedeclaredfeatures.framework import (
    Feature,
    FeatureRequirements,
    NodeConfiguration,
    PodInfo,
    RuntimeFeatures,
)
from wasmsched.plugins.nodedeclaredfeatures.version import Version

# Feature (and feature gate) names.
RESTART_ALL_CONTAINERS_ON_CONTAINER_EXITS = "RestartAllContainersOnContainerExits"
IPPR_POD_LEVEL_RESOURCES = "InPlacePodLevelResourcesVerticalScaling"
EXTEND_WEBSOCKETS_TO_KUBELET = "ExtendWebSocketsToKubelet"
IPPR_INIT_CONTAINERS = "InPlacePodVerticalScalingInitContainers"
IPPR_MEMORY_BACKED_VOLUMES = "InPlacePodVerticalScalingMemoryBackedVolumes"
USER_NAMESPACES_HOST_NETWORK_SUPPORT = "UserNamespacesHostNetworkSupport"
DRA_NODE_ALLOCATABLE_RESOURCES = "DRANodeAllocatableResources"
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"
DRA_OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"

CONTAINER_RESTART_RULE_ACTION_RESTART_ALL_CONTAINERS = "RestartAllContainers"
CONTAINER_RESTART_POLICY_ALWAYS = "Always"
STORAGE_MEDIUM_MEMORY = "Memory"


class _GateFeature(Feature):
    """A feature named after the one feature gate it depends on, with no MaxVersion, that no pod
    needs unless a subclass says so: the shape of most of the registry."""

    NAME = ""

    def name(self) -> str:
        return self.NAME

    def discover(self, cfg: NodeConfiguration) -> bool:
        return cfg.feature_gates.enabled(self.NAME)

    def requirements(self) -> FeatureRequirements:
        return FeatureRequirements((self.NAME,))

    def infer_for_scheduling(self, pod_info: PodInfo) -> bool:
        return False

    def infer_for_update(self, old_pod_info: PodInfo, new_pod_info: PodInfo) -> bool:
        return False

    def max_version(self) -> Version | None:
        return None


class RestartAllContainersFeature(_GateFeature):
    """restartallcontainers: a container (regular or init) with a RestartAllContainers restart rule
    needs a kubelet that implements it. Restart rules are immutable, so updates never need it."""

    NAME = RESTART_ALL_CONTAINERS_ON_CONTAINER_EXITS

    def infer_for_scheduling(self, pod_info: PodInfo) -> bool:
        spec = pod_info.spec
        return any(rule.action == CONTAINER_RESTART_RULE_ACTION_RESTART_ALL_CONTAINERS
                   for containers in (spec.containers, spec.initContainers)
                   for c in containers for rule in c.restartPolicyRules)


class PodLevelResourcesResizeFeature(_GateFeature):
    """inplacepodresize/pod_level_resource_resize: changing spec.resources (pod-level) in place."""

    NAME = IPPR_POD_LEVEL_RESOURCES

    def infer_for_update(self, old_pod_info: PodInfo, new_pod_info: PodInfo) -> bool:
        old, new = old_pod_info.spec, new_pod_info.spec
        old_set, new_set = old.HasField("resources"), new.HasField("resources")
        if not old_set and not new_set:
            return False
        if old_set != new_set:
            # A nil and a non-nil pointer are never semantically equal, even to an empty struct.
            return True
        return not _resource_requirements_semantic_equal(old.resources, new.resources)


class ExtendWebSocketsToKubeletFeature(_GateFeature):
    """extendwebsocketstokubelet: matters to neither scheduling nor updates."""

    NAME = EXTEND_WEBSOCKETS_TO_KUBELET


class NonSidecarInitContainerResizeFeature(_GateFeature):
    """inplacepodresize/nonsidecar_initcontainers_resize: resizing an init container that is not a
    sidecar (restartPolicy Always)."""

    NAME = IPPR_INIT_CONTAINERS

    def infer_for_update(self, old_pod_info: PodInfo, new_pod_info: PodInfo) -> bool:
        new_init = new_pod_info.spec.initContainers
        # Indexes the new list by the old one's positions, as kube does (validation keeps the
        # container lists the same length on update).
        return any(not _is_sidecar(c) and c.resources != new_init[i].resources
                   for i, c in enumerate(old_pod_info.spec.initContainers))


class MemoryBackedVolumesResizeFeature(_GateFeature):
    """inplacepodresize/memory_backed_volumes_resize: changing the sizeLimit of a memory-backed
    emptyDir in place."""

    NAME = IPPR_MEMORY_BACKED_VOLUMES

    def infer_for_update(self, old_pod_info: PodInfo, new_pod_info: PodInfo) -> bool:
        old_vols, new_vols = old_pod_info.spec.volumes, new_pod_info.spec.volumes
        if len(old_vols) != len(new_vols):
            # Volumes can only be resized, not added or removed: validation rejects such a patch.
            return False
        for old_vol, new_vol in zip(old_vols, new_vols, strict=True):
            if new_vol.name != old_vol.name:
                continue
            new_src, old_src = new_vol.volumeSource, old_vol.volumeSource
            if not new_src.HasField("emptyDir") or new_src.emptyDir.medium != STORAGE_MEDIUM_MEMORY:
                continue
            if not new_src.emptyDir.HasField("sizeLimit") or not old_src.emptyDir.HasField("sizeLimit"):
                continue
            if _quantity_cmp(new_src.emptyDir.sizeLimit.string, old_src.emptyDir.sizeLimit.string) != 0:
                return True
        return False


class UserNamespacesHostNetworkFeature(_GateFeature):
    """usernamespaceshostnetwork: a pod on the host network in its own user namespace (hostUsers
    false) needs a kubelet whose feature gate is on and whose runtime supports the combination.
    Both fields are immutable, so updates never need it."""

    NAME = USER_NAMESPACES_HOST_NETWORK_SUPPORT

    def requirements(self) -> FeatureRequirements:
        return FeatureRequirements((self.NAME,), RuntimeFeatures(user_namespaces_host_network=True))

    def discover(self, cfg: NodeConfiguration) -> bool:
        return cfg.feature_gates.enabled(self.NAME) and cfg.runtime_features.user_namespaces_host_network

    def infer_for_scheduling(self, pod_info: PodInfo) -> bool:
        spec = pod_info.spec
        # hostUsers is a pointer: only an explicit false asks for a user namespace.
        return spec.hostNetwork and spec.HasField("hostUsers") and not spec.hostUsers


class DRANodeAllocatableResourcesFeature(_GateFeature):
    """dranodeallocatableresources: matters to neither scheduling nor updates."""

    NAME = DRA_NODE_ALLOCATABLE_RESOURCES


class VolumeBindMountOptionsFeature(_GateFeature):
    """volumebindmountoptions: a volume mount with bindMountOptions, in any kind of container, needs a
    kubelet whose feature gate is on and whose runtime supports mount options."""

    NAME = VOLUME_BIND_MOUNT_OPTIONS

    def requirements(self) -> FeatureRequirements:
        return FeatureRequirements((self.NAME,), RuntimeFeatures(mount_options=True))

    def discover(self, cfg: NodeConfiguration) -> bool:
        return cfg.feature_gates.enabled(self.NAME) and cfg.runtime_features.mount_options

    def infer_for_scheduling(self, pod_info: PodInfo) -> bool:
        spec = pod_info.spec

        def any_bind_mount_options(containers: Iterable[Any]) -> bool:
            return any(len(m.bindMountOptions) for c in containers for m in c.volumeMounts)

        return (any_bind_mount_options(spec.containers) or any_bind_mount_options(spec.initContainers)
                or any_bind_mount_options(e.ephemeralContainerCommon for e in spec.ephemeralContainers))


class DRAOptionalNodeOperationsFeature(_GateFeature):
    """draoptionalnodeoperations: a claim's allocation is not known before PreBind, so the scheduler
    cannot infer it here; the DynamicResources plugin filters such claims itself."""

    NAME = DRA_OPTIONAL_NODE_OPERATIONS


def _is_sidecar(c: Container) -> bool:
    return c.restartPolicy == CONTAINER_RESTART_POLICY_ALWAYS


def _quantity_cmp(a: str, b: str) -> int:
    qa, qb = cached_quantity(a).amount, cached_quantity(b).amount
    return (qa > qb) - (qa < qb)


def _resource_list_semantic_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    # Semantic.DeepEqual on a ResourceList: the same names, quantities equal by value ("1" == "1000m").
    return a.keys() == b.keys() and all(_quantity_cmp(a[k].string, b[k].string) == 0 for k in a)


def _resource_requirements_semantic_equal(a: ResourceRequirements, b: ResourceRequirements) -> bool:
    return (_resource_list_semantic_equal(a.limits, b.limits)
            and _resource_list_semantic_equal(a.requests, b.requests)
            and list(a.claims) == list(b.claims))


# AllFeatures, in registry.go's order (the Framework sorts them by name).
ALL_FEATURES: tuple[Feature, ...] = (
    RestartAllContainersFeature(),
    PodLevelResourcesResizeFeature(),
    ExtendWebSocketsToKubeletFeature(),
    NonSidecarInitContainerResizeFeature(),
    MemoryBackedVolumesResizeFeature(),
    UserNamespacesHostNetworkFeature(),
    DRANodeAllocatableResourcesFeature(),
    VolumeBindMountOptionsFeature(),
    DRAOptionalNodeOperationsFeature(),
)
