"""TaintToleration (tainttoleration/taint_toleration.go): Filter, PreScore, Score, NormalizeScore."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.taints import find_untolerated_taint, tolerations_tolerate_taint
from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState, NotFoundError
from wasmsched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from wasmsched.framework.interface import (
    MAX_NODE_SCORE,
    BatchScores,
    EnqueueExtensions,
    FilterPlugin,
    FilterVerdicts,
    Handle,
    NodeBatch,
    NodeScore,
    PreScorePlugin,
    ScorePlugin,
)
from wasmsched.framework.memo import MemoKey
from wasmsched.framework.node_facts import TaintKey, node_facts
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.helper.normalize_score import default_normalize_score, reverse_normalized
from wasmsched.plugins.helper.objects import as_update
from wasmsched.plugins.helper.podmemo import shape_memoized
from wasmsched.plugins.helper.taint import TAINT_EFFECT_PREFER_NO_SCHEDULE, do_not_schedule_taints_filter_func

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeColumns

NAME = "TaintToleration"
# Status.unresolvable(reason), built directly in per-node loops.
_UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
# PodShape memo entry: the pod's tolerations of PreferNoSchedule taints (PreScore's state).
_PREFER_NO_SCHEDULE_MEMO: MemoKey[list[Any]] = MemoKey("TaintToleration.prefer_no_schedule")
PRE_SCORE_STATE_KEY = "PreScore" + NAME

# kube >= 1.34 no longer names the taint in the reason (it is logged at V(4) instead).
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

_DO_NOT_SCHEDULE = do_not_schedule_taints_filter_func()

# Up to this many distinct taint lists in the node table, the columnar forms check each of them
# rather than finding the ones of the nodes at hand.
_FEW_TAINT_LISTS = 32


class _PreScoreState:
    __slots__ = ("tolerations_prefer_no_schedule",)

    def __init__(self, tolerations: list[Any]) -> None:
        self.tolerations_prefer_no_schedule = tolerations

    def clone(self) -> _PreScoreState:
        # Read-only after PreScore, so sharing is safe (as kube's Clone returns itself).
        return self


def _all_tolerations_prefer_no_schedule(tolerations: Sequence[Any]) -> list[Any]:
    # An empty effect means all effects, PreferNoSchedule included.
    return [t for t in tolerations if not t.effect or t.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE]


def _count_intolerable_taints_prefer_no_schedule(taints: Sequence[Any], tolerations: Sequence[Any]) -> int:
    n = 0
    for taint in taints:
        if taint.effect != TAINT_EFFECT_PREFER_NO_SCHEDULE:
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            n += 1
    return n


def _untolerated(taints: Sequence[Any], tolerations: Sequence[Any]) -> bool:
    return find_untolerated_taint(taints, tolerations, _DO_NOT_SCHEDULE) is not None


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle

    # --- EnqueueExtensions -------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Queueing hints are always on in 1.37: no UpdateNodeLabel, and the pod's own toleration update.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_target_pod_toleration_change,
            ),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_update(Node, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        original, modified = typed
        tolerations = pod.spec.tolerations
        was_untolerated = True
        if original is not None:
            was_untolerated = _untolerated(original.spec.taints, tolerations)
        is_untolerated = _untolerated(modified.spec.taints, tolerations)
        if was_untolerated and not is_untolerated:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_target_pod_toleration_change(self, pod: Pod, old_obj: Any,
                                                          new_obj: Any) -> QueueingHint:
        # The updated pod is the rejected one (TargetPod): a new toleration may be the one it needs.
        return QueueingHint.QUEUE

    # --- Filter ------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return None
        taints = node.spec.taints
        if not taints:
            return None
        if _untolerated(taints, pod.spec.tolerations):
            return Status.unresolvable(ERR_REASON_UNTOLERATED)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        if batch.columns is not None:
            return self._filter_columns(pod, batch.columns)
        tolerations = list(pod.spec.tolerations)
        out: dict[int, Status] = {}
        # The answer depends on the pod's tolerations and the taints' key, value and effect only.
        untolerated_by_taints: dict[TaintKey, bool] = {}
        for i, ni in enumerate(batch.node_infos):
            node = ni.node
            if node is None:
                continue
            f = node_facts(ni, node)
            key = f.do_not_schedule_key
            if not key:
                continue
            untolerated = untolerated_by_taints.get(key)
            if untolerated is None:
                untolerated = find_untolerated_taint(f.do_not_schedule_taints, tolerations) is not None
                untolerated_by_taints[key] = untolerated
            if untolerated:
                out[i] = Status(_UNRESOLVABLE, [ERR_REASON_UNTOLERATED])
        return out

    @staticmethod
    def _filter_columns(pod: Pod, columns: NodeColumns) -> FilterVerdicts:
        import numpy as np

        table = columns.table
        ids = table.taint_id[columns.rows] if table.tainted_rows else None
        if ids is None or not ids.any():
            return {}
        tolerations = list(pod.spec.tolerations)
        # The answer depends on the node's taint list only: one check per distinct list (of the table's,
        # when they are few; else of these rows').
        lists = table.taint_lists
        tids = range(1, len(lists)) if len(lists) <= _FEW_TAINT_LISTS else [t for t in np.unique(ids).tolist() if t]
        tolerated = np.ones(len(lists), dtype=np.bool_)
        for tid in tids:
            tolerated[tid] = find_untolerated_taint(lists[tid], tolerations, _DO_NOT_SCHEDULE) is None
        return {i: Status(_UNRESOLVABLE, [ERR_REASON_UNTOLERATED]) for i in np.flatnonzero(~tolerated[ids]).tolist()}

    # --- PreScore / Score --------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        tolerations = shape_memoized(state, pod, _PREFER_NO_SCHEDULE_MEMO,
                                     lambda p: _all_tolerations_prefer_no_schedule(p.spec.tolerations))
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(tolerations))
        return None

    @staticmethod
    def _get_pre_score_state(state: CycleState) -> _PreScoreState | Status:
        try:
            s = state.read(PRE_SCORE_STATE_KEY)
        except NotFoundError:
            return Status.error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        if not isinstance(s, _PreScoreState):
            return Status.error(f"{s!r} convert to tainttoleration.preScoreState error")
        return s

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = self._get_pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        node = node_info.node
        if node is None:
            return 0, None
        return _count_intolerable_taints_prefer_no_schedule(node.spec.taints, s.tolerations_prefer_no_schedule), None

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        s = self._get_pre_score_state(state)
        if isinstance(s, Status):
            return [], s
        if batch.columns is not None:
            return self._score_columns(s, batch.columns), None
        tolerations = s.tolerations_prefer_no_schedule
        out = [0] * len(batch)
        count_by_taints: dict[TaintKey, int] = {}
        for i, ni in enumerate(batch.node_infos):
            node = ni.node
            if node is None:
                continue
            f = node_facts(ni, node)
            key = f.prefer_no_schedule_key
            if not key:
                continue
            n = count_by_taints.get(key)
            if n is None:
                n = _count_intolerable_taints_prefer_no_schedule(f.prefer_no_schedule_taints, tolerations)
                count_by_taints[key] = n
            out[i] = n
        return out, None

    @staticmethod
    def _score_columns(s: _PreScoreState, columns: NodeColumns) -> NDArray[np.int64]:
        """The nodes' counts of intolerable PreferNoSchedule taints: one count per distinct taint list."""
        import numpy as np

        table = columns.table
        n = len(columns.rows)
        ids = table.taint_id[columns.rows] if table.tainted_rows else None
        if ids is None or not ids.any():
            return np.zeros(n, dtype=np.int64)
        lists = table.taint_lists
        tids = range(1, len(lists)) if len(lists) <= _FEW_TAINT_LISTS else [t for t in np.unique(ids).tolist() if t]
        per_list = np.zeros(len(lists), dtype=np.int64)
        for tid in tids:
            per_list[tid] = _count_intolerable_taints_prefer_no_schedule(lists[tid], s.tolerations_prefer_no_schedule)
        return per_list[ids]  # type: ignore[no-any-return]

    def normalize_score_batch(self, state: CycleState, pod: Pod,
                              scores: NDArray[np.int64]) -> NDArray[np.int64] | None:
        import numpy as np

        return reverse_normalized(np, scores)

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)
