"""Which cluster events an object update amounts to (framework/events.go)."""

from __future__ import annotations

from wasmsched.api.types import Node, Pod
from wasmsched.framework.events import ActionType, ClusterEvent, EventResource
from wasmsched.framework.types import PodInfo


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    out = []

    def ev(action: ActionType, label: str) -> None:
        out.append(ClusterEvent(EventResource.NODE, action, label))

    if new.spec.unschedulable != old.spec.unschedulable:
        ev(ActionType.UPDATE_NODE_TAINT, "NodeSpecUnschedulableChange")
    if dict(new.status.allocatable) != dict(old.status.allocatable):
        ev(ActionType.UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange")
    if dict(new.metadata.labels) != dict(old.metadata.labels):
        ev(ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
    if list(new.spec.taints) != list(old.spec.taints):
        ev(ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")
    if [(c.type, c.status) for c in new.status.conditions] != [(c.type, c.status) for c in old.status.conditions]:
        ev(ActionType.UPDATE_NODE_CONDITION, "NodeConditionChange")
    if dict(new.metadata.annotations) != dict(old.metadata.annotations):
        ev(ActionType.UPDATE_NODE_ANNOTATION, "NodeAnnotationChange")
    return out


def pod_scheduling_properties_change(new: Pod, old: Pod) -> list[ClusterEvent]:
    resource = EventResource.ASSIGNED_POD if new.spec.nodeName else EventResource.UNSCHEDULED_POD
    out = []
    if dict(new.metadata.labels) != dict(old.metadata.labels):
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_LABEL, "PodLabelChange"))
    old_req, new_req = PodInfo(old).requests, PodInfo(new).requests
    if (new_req.milli_cpu < old_req.milli_cpu or new_req.memory < old_req.memory
            or new_req.ephemeral_storage < old_req.ephemeral_storage):
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_SCALE_DOWN, "PodRequestScaledDown"))
    if list(new.spec.tolerations) != list(old.spec.tolerations):
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_TOLERATION, "PodTolerationChange"))
    if len(old.spec.schedulingGates) and not len(new.spec.schedulingGates):
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
                                "PodSchedulingGateEliminatedChange"))
    if not out:
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_OTHER, "PodUpdate"))
    return out
