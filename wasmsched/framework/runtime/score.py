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
    BatchScores,
    NodeBatch,
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

    from wasmsched.framework.nodetable import NodeColumns


def run_pre_score_plugin(pl: PreScorePlugin, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
    try:
        return pl.pre_score(state, pod, nodes)
    except Exception as e:
        return Status.error(e)


def run_score_batch_plugin(pl: ScorePlugin, state: CycleState, pod: Pod,
                           batch: NodeBatch) -> tuple[BatchScores, Status | None]:
    """kube's runScorePlugin over every node: the raw scores, or a failure (scores of another count are one)."""
    try:
        scores, st = pl.score_batch(state, pod, batch)
    except Exception as e:
        return [], Status.error(e)
    if is_success(st) and len(scores) != len(batch):
        st = miscount("score_batch", len(scores), len(batch))
    return scores, st


def run_normalize_score(pl: ScorePlugin, state: CycleState, pod: Pod, batch: NodeBatch,
                        scores: BatchScores) -> tuple[BatchScores, Status | None]:
    """kube's runScoreExtension: `pl`'s NormalizeScore over its raw scores, in its batch form when it has one
    for them (an array), else over the nodes' NodeScores."""
    ext = pl.score_extensions()
    assert ext is not None
    try:
        values: list[int]
        if isinstance(scores, list):
            values = scores
        else:
            import numpy as np  # an array or another sequence: numpy is loaded with the node table

            raw: NDArray[np.int64] = np.asarray(scores, dtype=np.int64)
            out = pl.normalize_score_batch(state, pod, raw)
            if out is not None:
                if len(out) != len(raw):
                    return [], miscount("normalize_score_batch", len(out), len(raw))
                return out, None
            values = raw.tolist()
        lst = [NodeScore(ni.name, sc) for ni, sc in zip(batch.node_infos, values, strict=True)]
        st = ext.normalize_score(state, pod, lst)
    except Exception as e:
        return [], Status.error(e)
    # Go's NormalizeScore cannot resize the caller's slice; a Python list can be.
    if is_success(st) and len(lst) != len(values):
        return [], miscount("normalize_score", len(lst), len(values))
    return [ns.score for ns in lst], st


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
        """Score (score_batch), NormalizeScore and weights for every node. With `columns` (the nodes' rows in
        the snapshot's node table) the result is a ScoredNodes (arrays; NodePluginScores are made when
        read), otherwise a list."""
        batch = NodeBatch(nodes, columns)
        plugins = [pl for pl in self.plugins.score if pl.name not in state.skip_score_plugins]
        per_plugin: list[BatchScores] = []
        rec = state.record_plugin_metrics
        seconds = 0.0
        for pl in plugins:
            if rec:
                (scores, st), seconds = self.timer.timed(run_score_batch_plugin, pl, state, pod, batch)
                self.timer.observe_batch(pl.name, mn.SCORE, (code_of(st),), seconds, len(batch))
            else:
                scores, st = run_score_batch_plugin(pl, state, pod, batch)
            if not_success(st):
                return [], Status.error(f'running Score plugins: plugin "{pl.name}" failed with: {st.message()}')
            if pl.score_extensions() is not None:
                scores, st = (self.timer.result(mn.SCORE_EXTENSION_NORMALIZE, run_normalize_score, pl, state, pod,
                                                batch, scores) if rec
                              else run_normalize_score(pl, state, pod, batch, scores))
                if not_success(st):
                    return [], Status.error(f'running Normalize on Score plugins: plugin "{pl.name}" failed with: '
                                            f"{st.message()}")
            per_plugin.append(scores)
        if columns is None:
            return self._weighted_lists(nodes, plugins, per_plugin)
        return self._weighted_arrays(nodes, plugins, per_plugin)

    def _weighted_lists(self, nodes: Sequence[NodeInfo], plugins: list[ScorePlugin],
                        per_plugin: list[BatchScores]) -> tuple[list[NodePluginScores], Status | None]:
        """The plugins' scores checked and weighted, as a NodePluginScores per node."""
        names = tuple(pl.name for pl in plugins)
        weighted: list[list[int]] = []
        for pl, got in zip(plugins, per_plugin, strict=True):
            scores = got if isinstance(got, list) else [int(s) for s in got]
            if scores and (max(scores) > MAX_NODE_SCORE or min(scores) < MIN_NODE_SCORE):
                return [], _invalid_score(pl.name, scores)
            w = self.score_plugin_weight.get(pl.name, 1)
            weighted.append(scores if w == 1 else [s * w for s in scores])
        if not weighted:
            return [NodePluginScores(ni.name) for ni in nodes], None
        rows = list(zip(*weighted, strict=True))
        return [NodePluginScores(ni.name, None, sum(row), names, row)
                for ni, row in zip(nodes, rows, strict=True)], None

    def _weighted_arrays(self, nodes: Sequence[NodeInfo], plugins: list[ScorePlugin],
                         per_plugin: list[BatchScores]) -> tuple[Sequence[NodePluginScores], Status | None]:
        """The plugins' scores checked and weighted, as one matrix (a ScoredNodes)."""
        import numpy as np  # loaded with the node table

        from wasmsched.framework.nodetable import ScoredNodes

        # Lists may hold any int: each is checked before it becomes an array; the arrays are checked together.
        # The first invalid plugin in order is reported, as in _weighted_lists.
        bad_lists: set[int] = set()
        arrays: list[Any] = []
        for i, scores in enumerate(per_plugin):
            if isinstance(scores, np.ndarray):
                arrays.append(scores)
            elif len(scores) and (max(scores) > MAX_NODE_SCORE or min(scores) < MIN_NODE_SCORE):
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
            return [], _invalid_score(plugins[first].name, [int(s) for s in scores])
        weights = [self.score_plugin_weight.get(pl.name, 1) for pl in plugins]
        if any(w != 1 for w in weights):
            matrix *= np.array(weights, dtype=np.int64)[:, None]  # vstack made it: ours to change
        return ScoredNodes(nodes, tuple(pl.name for pl in plugins), matrix), None


def _invalid_score(plugin: str, scores: Sequence[int]) -> Status:
    bad = next(s for s in scores if s > MAX_NODE_SCORE or s < MIN_NODE_SCORE)
    return Status.error(
        f'applying score defaultWeights on Score plugins: plugin "{plugin}" returns an invalid score '
        f"{bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
    )
