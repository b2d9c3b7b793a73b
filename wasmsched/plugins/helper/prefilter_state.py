"""Filter and its batch form for plugins whose PreFilter state alone decides each node.

InterPodAffinity and PodTopologySpread both read the state PreFilter wrote (an Error status when
it is missing) and then check every node against it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import FilterVerdicts, NodeBatch, verdicts_of
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo

S = TypeVar("S")


def filter_with_state(
    read_state: Callable[[CycleState], S | Status],
    filter_node: Callable[[S, NodeInfo], Status | None],
    state: CycleState,
    node_info: NodeInfo,
) -> Status | None:
    """filter_node against the PreFilter state, or the read error."""
    s = read_state(state)
    if isinstance(s, Status):
        return s
    return filter_node(s, node_info)


def filter_batch_with_state(
    read_state: Callable[[CycleState], S | Status],
    filter_node: Callable[[S, NodeInfo], Status | None],
    state: CycleState,
    batch: NodeBatch,
) -> FilterVerdicts:
    """filter_with_state for each node, the state read once (its error repeated for every node)."""
    s = read_state(state)
    if isinstance(s, Status):
        return dict.fromkeys(range(len(batch)), s)
    return verdicts_of(filter_node(s, ni) for ni in batch.node_infos)
