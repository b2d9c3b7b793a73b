"""The Kubernetes message classes used across wasmsched, and the (apiVersion, kind) registry.

The generated protobuf modules live under `wasmsched.api.gen`; everything else imports the
classes from here so the generated layout stays an implementation detail.
"""

from __future__ import annotations

from google.protobuf.message import Message

from wasmsched.api.gen.k8s_io.api.apps.v1 import generated_pb2 as apps_pb
from wasmsched.api.gen.k8s_io.api.core.v1 import generated_pb2 as core_pb
from wasmsched.api.gen.k8s_io.api.events.v1 import generated_pb2 as events_pb
from wasmsched.api.gen.k8s_io.api.policy.v1 import generated_pb2 as policy_pb
from wasmsched.api.gen.k8s_io.api.resource.v1 import generated_pb2 as resource_pb
from wasmsched.api.gen.k8s_io.api.scheduling.v1 import generated_pb2 as scheduling_pb
from wasmsched.api.gen.k8s_io.api.storage.v1 import generated_pb2 as storage_pb
from wasmsched.api.gen.k8s_io.apimachinery.pkg.apis.meta.v1 import generated_pb2 as meta_pb

Pod = core_pb.Pod
PodList = core_pb.PodList
PodSpec = core_pb.PodSpec
Node = core_pb.Node
NodeList = core_pb.NodeList
Namespace = core_pb.Namespace
NamespaceList = core_pb.NamespaceList
List = core_pb.List
Binding = core_pb.Binding
# events.k8s.io/v1, what `run` writes (not a kind manifests may hold).
EventsV1Event = events_pb.Event
Container = core_pb.Container
ContainerPort = core_pb.ContainerPort
ResourceRequirements = core_pb.ResourceRequirements
Taint = core_pb.Taint
Toleration = core_pb.Toleration
NodeSelector = core_pb.NodeSelector
NodeSelectorTerm = core_pb.NodeSelectorTerm
NodeSelectorRequirement = core_pb.NodeSelectorRequirement
PreferredSchedulingTerm = core_pb.PreferredSchedulingTerm
Affinity = core_pb.Affinity
NodeAffinity = core_pb.NodeAffinity
PodAffinity = core_pb.PodAffinity
PodAntiAffinity = core_pb.PodAntiAffinity
PodAffinityTerm = core_pb.PodAffinityTerm
WeightedPodAffinityTerm = core_pb.WeightedPodAffinityTerm
TopologySpreadConstraint = core_pb.TopologySpreadConstraint
ObjectReference = core_pb.ObjectReference
PersistentVolume = core_pb.PersistentVolume
PersistentVolumeClaim = core_pb.PersistentVolumeClaim
Service = core_pb.Service
ReplicationController = core_pb.ReplicationController
ReplicaSet = apps_pb.ReplicaSet
StatefulSet = apps_pb.StatefulSet
PriorityClass = scheduling_pb.PriorityClass
PodDisruptionBudget = policy_pb.PodDisruptionBudget
StorageClass = storage_pb.StorageClass
CSINode = storage_pb.CSINode
CSIDriver = storage_pb.CSIDriver
CSIStorageCapacity = storage_pb.CSIStorageCapacity
VolumeAttachment = storage_pb.VolumeAttachment
ResourceClaim = resource_pb.ResourceClaim
ResourceClaimTemplate = resource_pb.ResourceClaimTemplate
DeviceClass = resource_pb.DeviceClass
ResourceSlice = resource_pb.ResourceSlice
ObjectMeta = meta_pb.ObjectMeta
OwnerReference = meta_pb.OwnerReference
LabelSelector = meta_pb.LabelSelector
LabelSelectorRequirement = meta_pb.LabelSelectorRequirement
Time = meta_pb.Time

# (apiVersion, kind) -> message class for every kind a manifest may contain.
KIND_TYPES: dict[tuple[str, str], type[Message]] = {
    ("v1", "Pod"): core_pb.Pod,
    ("v1", "PodList"): core_pb.PodList,
    ("v1", "Node"): core_pb.Node,
    ("v1", "NodeList"): core_pb.NodeList,
    ("v1", "Namespace"): core_pb.Namespace,
    ("v1", "NamespaceList"): core_pb.NamespaceList,
    ("v1", "List"): core_pb.List,
    ("v1", "PersistentVolume"): core_pb.PersistentVolume,
    ("v1", "PersistentVolumeList"): core_pb.PersistentVolumeList,
    ("v1", "PersistentVolumeClaim"): core_pb.PersistentVolumeClaim,
    ("v1", "PersistentVolumeClaimList"): core_pb.PersistentVolumeClaimList,
    ("v1", "Service"): core_pb.Service,
    ("v1", "ServiceList"): core_pb.ServiceList,
    ("v1", "ReplicationController"): core_pb.ReplicationController,
    ("v1", "ReplicationControllerList"): core_pb.ReplicationControllerList,
    ("v1", "Binding"): core_pb.Binding,
    ("apps/v1", "ReplicaSet"): apps_pb.ReplicaSet,
    ("apps/v1", "ReplicaSetList"): apps_pb.ReplicaSetList,
    ("apps/v1", "StatefulSet"): apps_pb.StatefulSet,
    ("apps/v1", "StatefulSetList"): apps_pb.StatefulSetList,
    ("scheduling.k8s.io/v1", "PriorityClass"): scheduling_pb.PriorityClass,
    ("scheduling.k8s.io/v1", "PriorityClassList"): scheduling_pb.PriorityClassList,
    ("policy/v1", "PodDisruptionBudget"): policy_pb.PodDisruptionBudget,
    ("policy/v1", "PodDisruptionBudgetList"): policy_pb.PodDisruptionBudgetList,
    ("storage.k8s.io/v1", "StorageClass"): storage_pb.StorageClass,
    ("storage.k8s.io/v1", "StorageClassList"): storage_pb.StorageClassList,
    ("storage.k8s.io/v1", "CSINode"): storage_pb.CSINode,
    ("storage.k8s.io/v1", "CSINodeList"): storage_pb.CSINodeList,
    ("storage.k8s.io/v1", "CSIDriver"): storage_pb.CSIDriver,
    ("storage.k8s.io/v1", "CSIDriverList"): storage_pb.CSIDriverList,
    ("storage.k8s.io/v1", "CSIStorageCapacity"): storage_pb.CSIStorageCapacity,
    ("storage.k8s.io/v1", "CSIStorageCapacityList"): storage_pb.CSIStorageCapacityList,
    ("storage.k8s.io/v1", "VolumeAttachment"): storage_pb.VolumeAttachment,
    ("storage.k8s.io/v1", "VolumeAttachmentList"): storage_pb.VolumeAttachmentList,
    ("resource.k8s.io/v1", "ResourceClaim"): resource_pb.ResourceClaim,
    ("resource.k8s.io/v1", "ResourceClaimList"): resource_pb.ResourceClaimList,
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): resource_pb.ResourceClaimTemplate,
    ("resource.k8s.io/v1", "ResourceClaimTemplateList"): resource_pb.ResourceClaimTemplateList,
    ("resource.k8s.io/v1", "DeviceClass"): resource_pb.DeviceClass,
    ("resource.k8s.io/v1", "DeviceClassList"): resource_pb.DeviceClassList,
    ("resource.k8s.io/v1", "ResourceSlice"): resource_pb.ResourceSlice,
    ("resource.k8s.io/v1", "ResourceSliceList"): resource_pb.ResourceSliceList,
}

# message full name -> (apiVersion, kind), to write TypeMeta back out.
TYPE_META: dict[str, tuple[str, str]] = {cls.DESCRIPTOR.full_name: gvk for gvk, cls in KIND_TYPES.items()}

# Kinds whose objects live in a namespace (the rest are cluster-scoped).
NAMESPACED_KINDS: frozenset[str] = frozenset(
    {"Pod", "PersistentVolumeClaim", "Service", "PodDisruptionBudget", "Binding", "ReplicationController",
     "ReplicaSet", "StatefulSet", "CSIStorageCapacity", "ResourceClaim", "ResourceClaimTemplate"}
)


def type_meta(msg: Message) -> tuple[str, str] | None:
    """The (apiVersion, kind) of a top-level message, or None for nested types."""
    return TYPE_META.get(msg.DESCRIPTOR.full_name)


def pod_key(pod: core_pb.Pod) -> str:
    """The "namespace/name" of a pod, as logs, events and reports name it (klog.KObj).

    The queue, cache and waiting pods key pods by UID instead: framework.types.get_pod_key.
    """
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def pod_priority(pod: core_pb.Pod) -> int:
    """The pod's priority, 0 when unset (component-helpers' PodPriority)."""
    return pod.spec.priority if pod.spec.HasField("priority") else 0


def object_key(obj: Message) -> str:
    """The cache key of any object: "namespace/name", or "name" when cluster-scoped."""
    meta = obj.metadata  # type: ignore[attr-defined]
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name
