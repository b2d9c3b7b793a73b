"""NodeUnschedulable (nodeunschedulable/node_unschedulable.go): Filter and EventsToRegister."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wasmsched.api.taints import tolerations_tolerate_taint
from wasmsched.api.types import Node, Pod, Taint
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from wasmsched.framework.interface import EnqueueExtensions, FilterPlugin, FilterVerdicts, NodeBatch
from wasmsched.framework.node_facts import node_facts
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.helper.objects import as_update

if TYPE_CHECKING:

    pass

NAME = "NodeUnschedulable"
# Status.unresolvable(reason), built directly in per-node loops.
_UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

# A pod tolerating this taint also tolerates node.spec.unschedulable.
_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule")


def _tolerates_unschedulable(pod: Pod) -> bool:
    return tolerations_tolerate_taint(pod.spec.tolerations, _UNSCHEDULABLE_TAINT)


def _rejects(unschedulable: bool, pod: Pod) -> bool:
    """Whether Filter rejects the pod on a node with this node.spec.unschedulable: `filter`'s test for a node, and
    what its batch forms compute once per value of the flag."""
    return unschedulable and not _tolerates_unschedulable(pod)


def _unschedulable_status() -> Status:
    """Filter's status for a node `_rejects` (Status.unresolvable, built directly: batch forms make one per node)."""
    return Status(_UNRESOLVABLE, [ERR_REASON_UNSCHEDULABLE])


class NodeUnschedulable(FilterPlugin, EnqueueExtensions):
    name = NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return None
        return _unschedulable_status() if _rejects(node_facts(node_info, node).unschedulable, pod) else None

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        # The answer depends on the node's spec.unschedulable only, and a schedulable node always passes
        # (_rejects(False, pod) is False): _rejects(True, pod) decides for every unschedulable node at once.
        columns = batch.columns
        if columns is not None:
            table = columns.table
            flags = table.unschedulable[columns.rows] if table.unschedulable_rows else None
            if flags is None or not flags.any() or not _rejects(True, pod):
                return {}
            return {i: _unschedulable_status() for i in flags.nonzero()[0].tolist()}
        out: dict[int, Status] = {}
        rejects: bool | None = None
        for i, ni in enumerate(batch.node_infos):
            node = ni.node
            if node is None or not node_facts(ni, node).unschedulable:
                continue
            if rejects is None:
                rejects = _rejects(True, pod)
            if not rejects:
                return {}
            out[i] = _unschedulable_status()
        return out

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # With queueing hints (always on in 1.37) no UpdateNodeLabel registration is needed.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change,
            ),
            # Only the pod's own updates: a new toleration of the node.kubernetes.io/unschedulable taint.
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_target_pod_toleration_change,
            ),
        ]

    def is_schedulable_after_target_pod_toleration_change(self, pod: Pod, old_obj: Any,
                                                          new_obj: Any) -> QueueingHint:
        typed = as_update(Pod, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        # Tolerations can only be added, and a pod rejected here lacked the toleration, so the new
        # tolerations alone decide.
        if _tolerates_unschedulable(typed[1]):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_update(Node, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        original, modified = typed
        # Queue when a node becomes schedulable, or a schedulable node is added.
        if original is not None and original.spec.unschedulable and not modified.spec.unschedulable:
            return QueueingHint.QUEUE
        if original is None and not modified.spec.unschedulable:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
