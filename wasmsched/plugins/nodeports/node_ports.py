"""NodePorts (nodeports/node_ports.go): PreFilter, Filter and EventsToRegister."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState, NotFoundError
from wasmsched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from wasmsched.framework.interface import (
    EnqueueExtensions,
    FilterPlugin,
    FilterVerdicts,
    NodeBatch,
    PreFilterPlugin,
    PreFilterResult,
)
from wasmsched.framework.pod_shape import HostPort, get_host_ports
from wasmsched.framework.status import Status
from wasmsched.framework.types import HostPortInfo, NodeInfo
from wasmsched.plugins.helper.objects import as_pair
from wasmsched.plugins.helper.prefilter_state import filter_batch_with_state, filter_with_state

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

def _fits_ports(want_ports: Sequence[HostPort], ports_in_use: HostPortInfo) -> bool:
    if not len(ports_in_use):
        return True
    check = ports_in_use.check_conflict
    return not any(check(ip, protocol, port) for ip, protocol, port in want_ports)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether none of the pod's host ports conflicts with the node's used ports."""
    return _fits_ports(get_host_ports(pod), node_info.used_ports)


class _PreFilterState(tuple[HostPort, ...]):
    __slots__ = ()

    def clone(self) -> _PreFilterState:
        # Not affected by adding or removing pods: no copy needed.
        return self


def _filter_node(want: _PreFilterState, node_info: NodeInfo) -> Status | None:
    """Filter for one node, given PreFilter's state (the pod's host ports)."""
    if not _fits_ports(want, node_info.used_ports):
        return Status.unschedulable(ERR_REASON)
    return None


class NodePorts(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        pi = state.pod_info
        # The cycle's PodInfo has them (the same list, made when the pod was queued).
        ports = pi.host_ports if pi is not None and pi.pod is pod else get_host_ports(pod)
        if not ports:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(ports))
        return None, None

    @staticmethod
    def _get_pre_filter_state(state: CycleState) -> _PreFilterState | Status:
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except NotFoundError:
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if not isinstance(s, _PreFilterState):
            return Status.error(f"{s!r}  convert to nodeports.preFilterState error")
        return s

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return filter_with_state(self._get_pre_filter_state, _filter_node, state, node_info)

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        return filter_batch_with_state(self._get_pre_filter_state, _filter_node, state, batch)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Ports are immutable (spec.containers[*].ports), so pod updates are not registered.
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                self.is_schedulable_after_assigned_pod_deleted,
            ),
            # No hint: a new node always retries the pod (with backoff), the same as Queue.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]

    def is_schedulable_after_assigned_pod_deleted(self, pod: Pod, old_obj: Any,
                                                  new_obj: Any) -> QueueingHint:
        typed = as_pair(Pod, old_obj, None)
        if typed is None or typed[0] is None:
            return QueueingHint.QUEUE
        deleted = typed[0]
        # An unscheduled pod's deletion frees no port.
        if not deleted.spec.nodeName and not deleted.status.nominatedNodeName:
            return QueueingHint.QUEUE_SKIP
        ports = get_host_ports(deleted)
        if not ports:
            return QueueingHint.QUEUE_SKIP
        in_use = HostPortInfo()
        for ip, protocol, port in ports:
            in_use.add(ip, protocol, port)
        if _fits_ports(get_host_ports(pod), in_use):
            # No port in common: the deletion cannot make this pod schedulable.
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE
