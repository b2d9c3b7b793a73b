"""PreScore, Score and NormalizeScore: kube's RunPreScorePlugins and RunScorePlugins with their
runXPlugin helpers (framework/runtime/framework.go), over all the feasible nodes at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodePluginScores,
    NodeScore,
    PreScorePlugin,
    ScorePlugin,
)
from wasmsched.framework.runtime.filter import miscount
from wasmsched.framework.runtime.plugin_timer import PluginTimer
from wasmsched.framework.runtime.profile import PluginLists
from wasmsched.framework.status import Status, code_of, is_skip, is_success, not_success
from wasmsched.framework.types import NodeInfo
from wasmsched.metrics import names as mn

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeColumns, ScoredNodes


def run_pre_score_plugin(pl: PreScorePlugin, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
    try:
        return pl.pre_score(state, pod, nodes)
    except Exception as e:
        return Status.error(e)


def run_score_nodes(pl: ScorePlugin, state: CycleState, pod: Pod,
                    nodes: Sequence[NodeInfo]) -> tuple[list[int], Status | None]:
    """kube's runScorePlugin over every node: the scores, or a failure (a list of another length is one)."""
    try:
        scores, st = pl.score_nodes(state, pod, nodes)
    except Exception as e:
        return [], Status.error(e)
    if is_success(st) and len(scores) != len(nodes):
        st = miscount("score_nodes", len(scores), len(nodes))
    return scores, st


def run_normalize_score(pl: ScorePlugin, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
    """kube's runScoreExtension: `pl`'s NormalizeScore over `scores`, in place."""
    ext = pl.score_extensions()
    assert ext is not None
    want = len(scores)
    try:
        st = ext.normalize_score(state, pod, scores)
    except Exception as e:
        return Status.error(e)
    # Go's NormalizeScore cannot resize the caller's slice; a Python list can be.
    if is_success(st) and len(scores) != want:
        return miscount("normalize_score", len(scores), want)
    return st


def run_normalize_columns(pl: ScorePlugin, state: CycleState, pod: Pod,
                          scores: NDArray[np.int64]) -> tuple[NDArray[np.int64] | None, Status | None]:
    """NormalizeScore over an array: (the normalized scores, or None when `pl` has no columnar form), or a
    failure."""
    try:
        out = pl.normalize_columns(state, pod, scores)
    except Exception as e:
        return None, Status.error(e)
    if out is not None and len(out) != len(scores):
        return None, miscount("normalize_columns", len(out), len(scores))
    return out, None


class ScoreRunners:
    """The Framework's PreScore and Score runners."""

    plugins: PluginLists
    timer: PluginTimer
    score_plugin_weight: dict[str, int]

    def has_score_plugins(self) -> bool:
        return bool(self.plugins.score)

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        skip: set[str] = set()
        rec = state.record_plugin_metrics
        for pl in self.plugins.pre_score:
            st = (self.timer.status(mn.PRE_SCORE, run_pre_score_plugin, pl, state, pod, nodes) if rec
                  else run_pre_score_plugin(pl, state, pod, nodes))
            if is_skip(st):
                skip.add(pl.name)
                continue
            if not_success(st):
                return Status.error(f'running PreScore plugin "{pl.name}": {st.message()}', pl.name)
        state.skip_score_plugins = skip
        return None

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                          columns: NodeColumns | None = None
                          ) -> tuple[Sequence[NodePluginScores], Status | None]:
        """Score, NormalizeScore and weights for every node. With `columns` (the nodes' rows in the
        snapshot's node table) plugins with a columnar form answer for all nodes at once, and the
        result is a ScoredNodes (arrays; NodePluginScores are made when read)."""
        if columns is not None:
            return self._run_score_plugins_columns(state, pod, nodes, columns)
        plugins = [pl for pl in self.plugins.score if pl.name not in state.skip_score_plugins]
        per_plugin: list[list[int]] = []
        rec = state.record_plugin_metrics
        seconds = 0.0
        for pl in plugins:
            if rec:
                (scores, st), seconds = self.timer.timed(run_score_nodes, pl, state, pod, nodes)
                self.timer.observe_batch(pl.name, mn.SCORE, (code_of(st),), seconds, len(nodes))
            else:
                scores, st = run_score_nodes(pl, state, pod, nodes)
            if not_success(st):
                return [], Status.error(f'running Score plugins: plugin "{pl.name}" failed with: {st.message()}')
            if pl.score_extensions() is not None:
                scores, st = self._normalize_scores(pl, state, pod, nodes, scores)
                if st is not None:
                    return [], st
            per_plugin.append(scores)
        names = tuple(pl.name for pl in plugins)
        weighted: list[list[int]] = []
        for pl, scores in zip(plugins, per_plugin, strict=True):
            if scores and (max(scores) > MAX_NODE_SCORE or min(scores) < MIN_NODE_SCORE):
                return [], _invalid_score(pl.name, scores)
            w = self.score_plugin_weight.get(pl.name, 1)
            weighted.append(scores if w == 1 else [s * w for s in scores])
        if not weighted:
            return [NodePluginScores(ni.name) for ni in nodes], None
        rows = list(zip(*weighted, strict=True))
        return [NodePluginScores(ni.name, None, sum(row), names, row)
                for ni, row in zip(nodes, rows, strict=True)], None

    def _normalize_scores(self, pl: ScorePlugin, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                          scores: list[int]) -> tuple[list[int], Status | None]:
        """A Score plugin's NormalizeScore over its per-node scores: (the normalized scores, None), or the
        cycle's Error status."""
        lst = [NodeScore(ni.name, sc) for ni, sc in zip(nodes, scores, strict=True)]
        st = (self.timer.status(mn.SCORE_EXTENSION_NORMALIZE, run_normalize_score, pl, state, pod, lst)
              if state.record_plugin_metrics else run_normalize_score(pl, state, pod, lst))
        if not_success(st):
            return [], Status.error(f'running Normalize on Score plugins: plugin "{pl.name}" failed with: '
                                    f"{st.message()}")
        return [ns.score for ns in lst], None

    def _normalize_columns(self, pl: ScorePlugin, state: CycleState, pod: Pod,
                           scores: NDArray[np.int64]) -> tuple[NDArray[np.int64] | None, Status | None]:
        """A plugin's normalize_columns, timed as its NormalizeScore: (the normalized scores or None when it
        has no columnar form, None) or (None, the cycle's Error status)."""
        (out, st), seconds = self.timer.timed(run_normalize_columns, pl, state, pod, scores)
        if out is None and st is None:
            return None, None  # normalized per node, and timed there
        self.timer.observe(pl.name, mn.SCORE_EXTENSION_NORMALIZE, code_of(st), seconds)
        if st is not None:
            return None, Status.error(f'running Normalize on Score plugins: plugin "{pl.name}" failed with: '
                                      f"{st.message()}")
        return out, None

    def _run_score_plugins_columns(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                                   columns: NodeColumns) -> tuple[ScoredNodes, Status | None]:
        """run_score_plugins with the columnar forms. In a cycle whose plugin metrics are sampled, a plugin
        with a NormalizeScore extension gives its scores and normalizes them apart (its per-node forms,
        without score_columns_unnormalized), so that Score and NormalizeScore are timed apart as
        run_score_plugins times them; the others' passes are timed as their Score."""
        import numpy as np  # loaded with the node table

        from wasmsched.framework.nodetable import ScoredNodes

        plugins = [pl for pl in self.plugins.score if pl.name not in state.skip_score_plugins]
        failed = ScoredNodes([], (), [])
        rec = state.record_plugin_metrics
        seconds = 0.0
        # Per plugin its normalized scores: an array (columnar form) or a list (per-node form).
        per_plugin: list[Any] = []
        for pl in plugins:
            apart = rec and pl.score_extensions() is not None  # Score and NormalizeScore timed apart
            if rec:
                (arr, raw, scores, st), seconds = self.timer.timed(_score_columns_pass, pl, state, pod, nodes,
                                                                   columns, apart)
                self.timer.observe_batch(pl.name, mn.SCORE, (code_of(st),), seconds, len(nodes))
            else:
                arr, raw, scores, st = _score_columns_pass(pl, state, pod, nodes, columns, apart)
            if not_success(st):
                return failed, Status.error(f'running Score plugins: plugin "{pl.name}" failed with: {st.message()}')
            if raw is not None:
                arr, st = self._normalize_columns(pl, state, pod, raw)
                if st is not None:
                    return failed, st
                if arr is None:
                    scores = raw.tolist()  # no columnar NormalizeScore: the extension's, per node
            if arr is not None:
                per_plugin.append(arr)
                continue
            if pl.score_extensions() is not None:
                scores, st = self._normalize_scores(pl, state, pod, nodes, scores)
                if st is not None:
                    return failed, st
            per_plugin.append(scores)
        # Lists (per-node forms) may hold any int: each is checked before it becomes an array; the arrays
        # are checked together. The first invalid plugin in order is reported, as in run_score_plugins.
        bad_lists: set[int] = set()
        arrays: list[Any] = []
        for i, scores in enumerate(per_plugin):
            if isinstance(scores, np.ndarray):
                arrays.append(scores)
            elif scores and (max(scores) > MAX_NODE_SCORE or min(scores) < MIN_NODE_SCORE):
                bad_lists.add(i)
                arrays.append(np.zeros(len(scores), dtype=np.int64))
            else:
                arrays.append(np.array(scores, dtype=np.int64))
        n = len(nodes)
        matrix = np.vstack(arrays, dtype=np.int64, casting="unsafe") if arrays else np.zeros((0, n), dtype=np.int64)
        bad = set(bad_lists)
        if n and arrays and (matrix.max() > MAX_NODE_SCORE or matrix.min() < MIN_NODE_SCORE):
            bad.update(np.flatnonzero((matrix.max(axis=1) > MAX_NODE_SCORE)
                                      | (matrix.min(axis=1) < MIN_NODE_SCORE)).tolist())
        if bad:
            first = min(bad)
            scores = per_plugin[first]
            return failed, _invalid_score(plugins[first].name,
                                          scores.tolist() if isinstance(scores, np.ndarray) else scores)
        weights = [self.score_plugin_weight.get(pl.name, 1) for pl in plugins]
        if any(w != 1 for w in weights):
            matrix *= np.array(weights, dtype=np.int64)[:, None]  # vstack made it: ours to change
        return ScoredNodes(nodes, tuple(pl.name for pl in plugins), matrix), None


def _score_columns_pass(pl: ScorePlugin, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                        columns: NodeColumns, apart: bool
                        ) -> tuple[NDArray[np.int64] | None, NDArray[np.int64] | None, list[int], Status | None]:
    """One Score plugin over the nodes: (normalized scores from the columnar form, or raw ones when
    NormalizeScore is to run `apart`, or the per-node form's scores; and a failure)."""
    arr = raw = None
    scores: list[int] = []
    st: Status | None = None
    try:
        arr = None if apart else pl.score_columns(state, pod, columns)
        raw = pl.score_columns_unnormalized(state, pod, columns) if apart else None
        if arr is None and raw is None:
            scores, st = pl.score_nodes(state, pod, nodes)
    except Exception as e:
        return None, None, [], Status.error(e)
    if is_success(st):
        method, got = (("score_columns", arr) if arr is not None else
                       ("score_columns_unnormalized", raw) if raw is not None else ("score_nodes", scores))
        if len(got) != len(nodes):
            st = miscount(method, len(got), len(nodes))
    return arr, raw, scores, st


def _invalid_score(plugin: str, scores: Sequence[int]) -> Status:
    bad = next(s for s in scores if s > MAX_NODE_SCORE or s < MIN_NODE_SCORE)
    return Status.error(
        f'applying score defaultWeights on Score plugins: plugin "{plugin}" returns an invalid score '
        f"{bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
    )
