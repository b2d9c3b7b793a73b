"""NodeName (nodename/node_name.go): Filter and EventsToRegister."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from wasmsched.framework.interface import ALL_PASS, EnqueueExtensions, FilterColumnsResult, FilterPlugin
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo

if TYPE_CHECKING:

    from wasmsched.framework.nodetable import NodeColumns

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

    def filter_nodes(self, state: CycleState, pod: Pod,
                     node_infos: Sequence[NodeInfo]) -> list[Status | None]:
        want = pod.spec.nodeName
        if not want:
            return [None] * len(node_infos)
        return [None if ni.name == want else Status.unresolvable(ERR_REASON) for ni in node_infos]

    def filter_columns(self, state: CycleState, pod: Pod, columns: NodeColumns) -> FilterColumnsResult:
        if pod.spec.nodeName:
            return None  # the per-node form compares names
        return ALL_PASS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # No hint: a new node always retries the pod (with backoff), the same as Queue.
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]
