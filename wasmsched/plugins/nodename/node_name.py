"""NodeName (nodename/node_name.go): Filter and EventsToRegister."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from wasmsched.framework.interface import EnqueueExtensions, FilterPlugin, FilterVerdicts, NodeBatch
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo

if TYPE_CHECKING:

    pass

NAME = "NodeName"

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the pod's spec.nodeName is unset or names this node."""
    want = pod.spec.nodeName
    return not want or want == node_info.name


class NodeName(FilterPlugin, EnqueueExtensions):
    name = NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not fits(pod, node_info):
            return Status.unresolvable(ERR_REASON)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        if not pod.spec.nodeName:
            return {}  # every node fits
        return {i: Status.unresolvable(ERR_REASON) for i, ni in enumerate(batch.node_infos) if not fits(pod, ni)}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # No hint: a new node always retries the pod (with backoff), the same as Queue.
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]
