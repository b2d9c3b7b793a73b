"""ClusterEvent, ActionType and QueueingHint, as framework/types.go and framework/events.go."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any


class ActionType(IntFlag):
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
    UPDATE_POD_OTHER = 1 << 12
    ALL = (1 << 13) - 1
    UPDATE = ALL ^ ADD ^ DELETE


class EventResource:
    # Resource names as framework/types.go's EventResource constants.
    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnschedulablePod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "storage.k8s.io/CSINode"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
    RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
    DEVICE_CLASS = "resource.k8s.io/DeviceClass"
    WILDCARD = "*"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action_type: int
    label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource == EventResource.WILDCARD and self.action_type == ActionType.ALL

    def match(self, incoming: ClusterEvent) -> bool:
        """Whether this registered event covers the incoming one (framework.ClusterEvent.Match)."""
        if self.is_wildcard():
            return True
        if not (self.action_type & incoming.action_type):
            return False
        if self.resource == EventResource.WILDCARD or self.resource == incoming.resource:
            return True
        # A registration for Pod covers assigned and unscheduled pods alike.
        return self.resource == EventResource.POD and incoming.resource in (
            EventResource.ASSIGNED_POD,
            EventResource.UNSCHEDULED_POD,
        )

    def __str__(self) -> str:
        return self.label or f"{self.resource}{ActionType(self.action_type).name or self.action_type}"


class QueueingHint(IntEnum):
    QUEUE_SKIP = 0
    QUEUE = 1


# fn(logger-less): (pod, old_obj, new_obj) -> QueueingHint
QueueingHintFn = Callable[[Any, Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None


EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
