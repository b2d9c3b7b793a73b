"""ClusterEvent, ActionType and QueueingHint, as framework/types.go and framework/events.go."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any


class ActionType(IntFlag):
    """fwk.ActionType of kube 1.37, bit for bit (kube-scheduler/framework/types.go)."""

    NONE = 0
    ADD = 1
    DELETE = 1 << 1
    # UpdateNodeXYZ apply to Node events only.
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4  # also node.spec.unschedulable turning false
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_NODE_DECLARED_FEATURE = 1 << 7
    UPDATE_NODE_PREEMPTION_POLICY = 1 << 8
    # UpdatePodXYZ apply to Pod events only.
    UPDATE_POD_LABEL = 1 << 9
    UPDATE_POD_SCALE_DOWN = 1 << 10
    UPDATE_POD_SCALE_UP = 1 << 11
    UPDATE_POD_TOLERATION = 1 << 12
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 13
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 14
    ALL = (1 << 15) - 1
    # Every update bit: an update that is none of the specific ones.
    UPDATE = ALL ^ ADD ^ DELETE


# ActionType.String(): kube's names of the single actions, All and Update; any other combination is "".
_ACTION_NAMES: dict[int, str] = {
    ActionType.ADD: "Add",
    ActionType.DELETE: "Delete",
    ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_NODE_DECLARED_FEATURE: "UpdateNodeDeclaredFeature",
    ActionType.UPDATE_NODE_PREEMPTION_POLICY: "UpdateNodePreemptionPolicy",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_SCALE_UP: "UpdatePodScaleUp",
    ActionType.UPDATE_POD_TOLERATION: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.ALL: "All",
    ActionType.UPDATE: "Update",
}


def action_type_name(action: int) -> str:
    return _ACTION_NAMES.get(action, "")


class EventResource:
    """Resource names as kube-scheduler/framework/types.go's EventResource constants."""

    # Pod is the general pod resource; a registration for it covers the three specific ones.
    POD = "Pod"
    # A scheduled pod was added, updated or deleted.
    ASSIGNED_POD = "AssignedPod"
    # An unscheduled pod other than the pod being requeued was added, updated or deleted.
    UNSCHEDULED_POD = "UnscheduledPod"
    # The unscheduled pod being requeued was itself updated (PriorityQueue.Update).
    TARGET_POD = "TargetPod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "storage.k8s.io/CSINode"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
    RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
    DEVICE_CLASS = "resource.k8s.io/DeviceClass"
    POD_GROUP = "scheduling.k8s.io/PodGroup"
    COMPOSITE_POD_GROUP = "scheduling.k8s.io/CompositePodGroup"
    WILDCARD = "*"


POD_EVENT_RESOURCES = (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD)


def match_event_resources(registered: str, incoming: str) -> bool:
    """matchEventResources: "*" matches everything, Pod matches its three specific resources."""
    return (registered == EventResource.WILDCARD or registered == incoming
            or (registered == EventResource.POD and incoming in POD_EVENT_RESOURCES))


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action_type: int
    # CustomLabel: only the special events (UnschedulableTimeout, ForceActivate) have one.
    label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource == EventResource.WILDCARD and self.action_type == ActionType.ALL

    def match(self, incoming: ClusterEvent) -> bool:
        """Whether this registered event covers the incoming one (framework.MatchClusterEvents).

        The incoming event must be the same as or more specific than the registered one: a general
        Update (an update that is none of the specific ones) only matches a registration of Update
        (or All), not one of UpdateNodeLabel alone.
        """
        return self.is_wildcard() or (
            match_event_resources(self.resource, incoming.resource)
            and bool(self.action_type & incoming.action_type)
            and incoming.action_type <= self.action_type
        )

    def __str__(self) -> str:
        """ClusterEvent.Label(), used in logs and metrics."""
        return self.label or f"{self.resource}{action_type_name(self.action_type)}"


def unroll_pod_event(event: ClusterEvent) -> list[ClusterEvent]:
    """UnrollPodEvent: a Pod registration as its AssignedPod, UnscheduledPod and TargetPod ones."""
    return [ClusterEvent(r, event.action_type) for r in POD_EVENT_RESOURCES]


def match_any_cluster_event(event: ClusterEvent, registered: Iterable[ClusterEvent]) -> bool:
    return any(r.match(event) for r in registered)


class QueueingHint(IntEnum):
    QUEUE_SKIP = 0
    QUEUE = 1


# fn(logger-less): (pod, old_obj, new_obj) -> QueueingHint
QueueingHintFn = Callable[[Any, Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None


# Labels of events that are not cluster events (framework/events.go).
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
FORCE_ACTIVATE = "ForceActivate"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
EVENT_ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE)
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.DELETE)
EVENT_TARGET_POD_UPDATE = ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE)
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, UNSCHEDULABLE_TIMEOUT)
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, FORCE_ACTIVATE)
