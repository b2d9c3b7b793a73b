"""TaintToleration (tainttoleration/taint_toleration.go): Filter, PreScore, Score, NormalizeScore."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from wasmsched.api.taints import find_untolerated_taint, tolerations_tolerate_taint
from wasmsched.api.types import Node, Pod, Taint, Toleration
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

T = TypeVar("T")


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


def _untolerated(taints: Sequence[Taint], tolerations: Iterable[Toleration]) -> bool:
    """Whether Filter rejects a node with these taints (all of the node's, or only those of the effects it
    looks at, NoSchedule and NoExecute): `filter`'s test for a node, and what its batch forms compute once
    per distinct taint list."""
    return bool(taints) and find_untolerated_taint(taints, tolerations, _DO_NOT_SCHEDULE) is not None


def _untolerated_status() -> Status:
    """Filter's status for a node `_untolerated` rejects (Status.unresolvable, built directly: batch forms
    make one per rejected node)."""
    return Status(_UNRESOLVABLE, [ERR_REASON_UNTOLERATED])


def _score_taints(taints: Sequence[Taint], tolerations_prefer_no_schedule: Sequence[Toleration]) -> int:
    """Score's raw score for a node with these taints (all of the node's, or only its PreferNoSchedule ones;
    countIntolerableTaintsPreferNoSchedule): what `score` returns for a node, and what its batch forms compute
    once per distinct taint list."""
    n = 0
    for taint in taints:
        if taint.effect != TAINT_EFFECT_PREFER_NO_SCHEDULE:
            continue
        if not tolerations_tolerate_taint(tolerations_prefer_no_schedule, taint):
            n += 1
    return n


def _per_taint_list(columns: NodeColumns,
                    fn: Callable[[tuple[Taint, ...]], T]) -> tuple[list[T], NDArray[np.int32] | None]:
    """A function of a node's taint list projected onto the node table's rows (as helper/columns.by_projection):
    fn once per distinct list, as (the answers by taint id, each row's taint id; None when no row has taints,
    which all take answers[0], fn of no taints). With few lists in the table every list is asked, which is
    cheaper than finding the rows' own."""
    import numpy as np

    table = columns.table
    if not table.tainted_rows:
        return [fn(())], None
    ids: NDArray[np.int32] = table.taint_id[columns.rows]
    lists = table.taint_lists
    if len(lists) <= _FEW_TAINT_LISTS:
        return [fn(taints) for taints in lists], ids
    answers = [fn(())] * len(lists)  # the ids of no row keep a filler
    for tid in np.unique(ids).tolist():
        answers[tid] = fn(lists[tid])
    return answers, ids


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
        if _untolerated(node_facts(node_info, node).taints, pod.spec.tolerations):
            return _untolerated_status()
        return None

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        tolerations = pod.spec.tolerations

        def untolerated(taints: tuple[Taint, ...]) -> bool:
            return _untolerated(taints, tolerations)

        if batch.columns is not None:
            return self._filter_columns(untolerated, batch.columns)
        # The same projection onto the nodes' own taint lists: _untolerated once per distinct list of NoSchedule
        # and NoExecute taints (node_facts'; the others do not change its answer). No such taints: tolerated.
        out: dict[int, Status] = {}
        by_taints: dict[TaintKey, bool] = {}
        for i, ni in enumerate(batch.node_infos):
            node = ni.node
            if node is None:
                continue
            f = node_facts(ni, node)
            key = f.do_not_schedule_key
            if not key:
                continue
            rejects = by_taints.get(key)
            if rejects is None:
                rejects = by_taints[key] = untolerated(f.do_not_schedule_taints)
            if rejects:
                out[i] = _untolerated_status()
        return out

    @staticmethod
    def _filter_columns(untolerated: Callable[[tuple[Taint, ...]], bool], columns: NodeColumns) -> FilterVerdicts:
        import numpy as np

        answers, ids = _per_taint_list(columns, untolerated)
        if not any(answers):
            return {}
        rejected = range(len(columns.rows)) if ids is None else np.flatnonzero(np.array(answers)[ids]).tolist()
        return {i: _untolerated_status() for i in rejected}

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
        return _score_taints(node_facts(node_info, node).taints, s.tolerations_prefer_no_schedule), None

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        s = self._get_pre_score_state(state)
        if isinstance(s, Status):
            return [], s
        tolerations = s.tolerations_prefer_no_schedule

        def fn(taints: tuple[Taint, ...]) -> int:
            return _score_taints(taints, tolerations)

        if batch.columns is not None:
            return self._score_columns(fn, batch.columns), None
        # The same projection onto the nodes' own taint lists: _score_taints once per distinct list of
        # PreferNoSchedule taints (node_facts'; the others do not change its answer). No such taints: 0.
        scores = [0] * len(batch)
        by_taints: dict[TaintKey, int] = {}
        for i, ni in enumerate(batch.node_infos):
            node = ni.node
            if node is None:
                continue
            f = node_facts(ni, node)
            key = f.prefer_no_schedule_key
            if not key:
                continue
            score = by_taints.get(key)
            if score is None:
                score = by_taints[key] = fn(f.prefer_no_schedule_taints)
            scores[i] = score
        return scores, None

    @staticmethod
    def _score_columns(fn: Callable[[tuple[Taint, ...]], int], columns: NodeColumns) -> NDArray[np.int64]:
        import numpy as np

        answers, ids = _per_taint_list(columns, fn)
        if ids is None:
            return np.full(len(columns.rows), answers[0], dtype=np.int64)
        scores: NDArray[np.int64] = np.array(answers, dtype=np.int64)[ids]
        return scores

    def normalize_score_batch(self, state: CycleState, pod: Pod,
                              scores: NDArray[np.int64]) -> NDArray[np.int64] | None:
        import numpy as np

        return reverse_normalized(np, scores)

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)
