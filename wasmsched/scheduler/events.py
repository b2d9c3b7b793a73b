"""Which cluster events an object update amounts to (framework/events.go of kube 1.37)."""

from __future__ import annotations

from collections.abc import Callable

from wasmsched.api.quantity import nano_to_milli, quantity_nano_value
from wasmsched.api.resources import pod_request_nanos, same_request_inputs
from wasmsched.api.types import Node, Pod
from wasmsched.framework.events import ActionType, ClusterEvent, EventResource

_NodeExtractor = Callable[[Node, Node], ActionType]
_PodExtractor = Callable[[Pod, Pod], ActionType]


def _node_spec_unschedulable(new: Node, old: Node) -> ActionType:
    # Only a node turning schedulable is an event (kube has no UpdateNodeSpecUnschedulable yet).
    if new.spec.unschedulable != old.spec.unschedulable and not new.spec.unschedulable:
        return ActionType.UPDATE_NODE_TAINT
    return ActionType.NONE


def _comparable(quantity: str) -> int | str:
    """A quantity's exact value, or for one with an exponent past what is materialised here ("1e5000",
    which kube accepts), its string."""
    try:
        return quantity_nano_value(quantity)
    except ValueError:
        return quantity


def _node_allocatable(new: Node, old: Node) -> ActionType:
    # Semantic.DeepEqual compares quantities by value: "1" and "1000m" are the same allocatable.
    def allocatable(n: Node) -> dict[str, int | str]:
        return {k: _comparable(q.string) for k, q in n.status.allocatable.items()}

    return ActionType.UPDATE_NODE_ALLOCATABLE if allocatable(new) != allocatable(old) else ActionType.NONE


def _node_labels(new: Node, old: Node) -> ActionType:
    return ActionType.UPDATE_NODE_LABEL if dict(new.metadata.labels) != dict(old.metadata.labels) else ActionType.NONE


def _node_taints(new: Node, old: Node) -> ActionType:
    return ActionType.UPDATE_NODE_TAINT if list(new.spec.taints) != list(old.spec.taints) else ActionType.NONE


def _node_conditions(new: Node, old: Node) -> ActionType:
    # Compared as type -> status maps: order, reasons and heartbeat times do not count.
    def strip(n: Node) -> dict[str, str]:
        return {c.type: c.status for c in n.status.conditions}

    return ActionType.UPDATE_NODE_CONDITION if strip(new) != strip(old) else ActionType.NONE


def _node_annotations(new: Node, old: Node) -> ActionType:
    return ActionType.UPDATE_NODE_ANNOTATION if dict(new.metadata.annotations) != dict(old.metadata.annotations) \
        else ActionType.NONE


def _node_preemption_policy(new: Node, old: Node) -> ActionType:
    def policy(n: Node) -> object:
        # A pointer in Go: unset and set-but-empty differ.
        return n.spec.podPreemptionPolicy if n.spec.HasField("podPreemptionPolicy") else None

    return ActionType.UPDATE_NODE_PREEMPTION_POLICY if policy(new) != policy(old) else ActionType.NONE


def _node_declared_features(new: Node, old: Node) -> ActionType:
    # NodeDeclaredFeatures is GA in 1.37; the list is kept sorted, so a list comparison is exact.
    return ActionType.UPDATE_NODE_DECLARED_FEATURE \
        if list(new.status.declaredFeatures) != list(old.status.declaredFeatures) else ActionType.NONE


_NODE_EXTRACTORS: tuple[_NodeExtractor, ...] = (
    _node_spec_unschedulable,
    _node_allocatable,
    _node_labels,
    _node_taints,
    _node_conditions,
    _node_annotations,
    _node_preemption_policy,
    _node_declared_features,
)


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    """NodeSchedulingPropertiesChange: one Node/UpdateNodeXYZ event per changed property, in kube's order
    (possibly none: an update changing nothing the scheduler looks at is no event)."""
    out = []
    for fn in _NODE_EXTRACTORS:
        action = fn(new, old)
        if action:
            out.append(ClusterEvent(EventResource.NODE, action))
    return out


def _pod_requests_milli(pod: Pod) -> dict[str, int]:
    # resource.PodRequests (status resources included, as InPlacePodVerticalScaling is GA), compared
    # by MilliValue as kube does.
    return {k: nano_to_milli(v) for k, v in pod_request_nanos(pod).items()}


def _pod_labels(new: Pod, old: Pod) -> ActionType:
    return ActionType.UPDATE_POD_LABEL if dict(new.metadata.labels) != dict(old.metadata.labels) else ActionType.NONE


def _pod_scale(new: Pod, old: Pod) -> tuple[ActionType, ActionType]:
    """extractPodScaleDown and extractPodScaleUp, reading each pod's requests once (none when the
    requests cannot have changed)."""
    if same_request_inputs(new, old):
        return ActionType.NONE, ActionType.NONE
    new_req, old_req = _pod_requests_milli(new), _pod_requests_milli(old)
    down = any(name not in new_req or q > new_req[name] for name, q in old_req.items())
    up = any(name not in old_req or q > old_req[name] for name, q in new_req.items())
    return (ActionType.UPDATE_POD_SCALE_DOWN if down else ActionType.NONE,
            ActionType.UPDATE_POD_SCALE_UP if up else ActionType.NONE)


def _pod_scheduling_gates_eliminated(new: Pod, old: Pod) -> ActionType:
    if not len(new.spec.schedulingGates) and len(old.spec.schedulingGates):
        return ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    return ActionType.NONE


def _pod_toleration(new: Pod, old: Pod) -> ActionType:
    # Tolerations can only be added (API validation), so kube compares the lengths only.
    if len(new.spec.tolerations) != len(old.spec.tolerations):
        return ActionType.UPDATE_POD_TOLERATION
    return ActionType.NONE


def _pod_generated_resource_claim(new: Pod, old: Pod) -> ActionType:
    # resourceclaim.PodStatusEqual / PodExtendedStatusEqual (DynamicResourceAllocation is GA).
    def claims(p: Pod) -> list[tuple[str, str | None]]:
        return [(s.name, s.resourceClaimName if s.HasField("resourceClaimName") else None)
                for s in p.status.resourceClaimStatuses]

    def extended(p: Pod) -> object:
        st = p.status
        return st.extendedResourceClaimStatus if st.HasField("extendedResourceClaimStatus") else None

    if claims(new) != claims(old) or extended(new) != extended(old):
        return ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
    return ActionType.NONE


# After labels and the two scale extractors (kube's order), which _pod_scale answers together.
_POD_EXTRACTORS: tuple[_PodExtractor, ...] = (
    _pod_scheduling_gates_eliminated,
    _pod_toleration,
    _pod_generated_resource_claim,
)


def pod_scheduling_properties_change(new: Pod, old: Pod, is_target_pod: bool) -> list[ClusterEvent]:
    """PodSchedulingPropertiesChange: the UpdatePodXYZ events of a pod update, or one general Update.

    The resource is AssignedPod for a bound pod, TargetPod when the update is of the unscheduled pod
    the queue is requeueing (PriorityQueue.Update), else UnscheduledPod.
    """
    if new.spec.nodeName:
        resource = EventResource.ASSIGNED_POD
    elif is_target_pod:
        resource = EventResource.TARGET_POD
    else:
        resource = EventResource.UNSCHEDULED_POD
    actions = [_pod_labels(new, old), *_pod_scale(new, old)]
    actions.extend(fn(new, old) for fn in _POD_EXTRACTORS)
    out = [ClusterEvent(resource, action) for action in actions if action]
    if not out:
        # No specific change: only registrations of the general Pod/Update see it.
        out.append(ClusterEvent(resource, ActionType.UPDATE))
    return out
