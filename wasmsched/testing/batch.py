"""The batch forms of Filter and Score as lists, one entry per node, for tests and benchmarks that compare
them with the per-node forms or with expected answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import FilterPlugin, NodeBatch, ScorePlugin
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo

if TYPE_CHECKING:
    from wasmsched.framework.nodetable import NodeColumns


def filter_statuses(pl: FilterPlugin | Any, state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo],
                    columns: NodeColumns | None = None) -> list[Status | None]:
    """pl.filter_batch's verdicts as one status per node, None where the node passes (as `filter` says). `pl`
may be a plugin whose extension points are known only when it is loaded (a wasm plugin)."""
    verdicts = pl.filter_batch(state, pod, NodeBatch(node_infos, columns))
    return [verdicts.get(i) for i in range(len(node_infos))]


def batch_scores(pl: ScorePlugin | Any, state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo],
                 columns: NodeColumns | None = None) -> tuple[list[int], Status | None]:
    """pl.score_batch's raw scores as a list of ints, and its status."""
    scores, st = pl.score_batch(state, pod, NodeBatch(node_infos, columns))
    return [int(s) for s in scores], st
