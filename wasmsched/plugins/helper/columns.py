"""Helpers for plugins' columnar forms (framework/nodetable.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeColumns

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import BatchScores, FilterVerdicts, NodeBatch, ScorePlugin
from wasmsched.framework.node_facts import node_facts
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo

T = TypeVar("T")


class ZeroScoresFastPath(ScorePlugin):
    """A Score plugin that kube runs for every pod but that scores every node 0 for most of them (no
    volume, no claim): `scores_nothing(state)` says so, and the whole pass is one answer instead of a
    call per node. Normalized zeros stay zeros (DefaultNormalizeScore), so the batch answer holds
    for plugins with a NormalizeScore too."""

    def scores_nothing(self, state: CycleState) -> bool:
        raise NotImplementedError

    def score_batch(self, state: CycleState, pod: Any, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        if not self.scores_nothing(state):
            return super().score_batch(state, pod, batch)
        if batch.columns is None:
            return [0] * len(batch), None
        import numpy as np  # loaded with the node table

        return np.zeros(len(batch), dtype=np.int64), None

    def normalize_score_batch(self, state: CycleState, pod: Any, scores: NDArray[np.int64]) -> NDArray[np.int64] | None:
        # Zeros: what DefaultNormalizeScore (not reversed) leaves them; anything else, per node.
        return None if scores.any() else scores.copy()


def verdicts_of_rejected(ok: NDArray[np.bool_], batch: NodeBatch,
                         filter_each: Callable[[Sequence[NodeInfo]], FilterVerdicts]) -> FilterVerdicts:
    """A columnar answer (`ok`, True where a node passes) as FilterVerdicts: the statuses of the nodes it
    rejects come from the per-node form `filter_each` over those nodes only, which has the final word."""
    import numpy as np

    rejected = np.flatnonzero(~ok).tolist()
    if not rejected:
        return {}
    node_infos = batch.node_infos
    verdicts = filter_each([node_infos[i] for i in rejected])
    return {rejected[j]: st for j, st in verdicts.items()}


def by_projection(columns: NodeColumns, keyed: Sequence[tuple[NDArray[np.int32], Sequence[Any]]],
                  fn: Callable[[list[Any]], T]) -> tuple[list[T], NDArray[np.intp]]:
    """fn(values) once per distinct combination of the rows' values in `keyed` (per column: the id of
    every table row, -1 for none, and the values by id; fn sees None for -1), for answers that depend
    on those values only: (the answers, the index of each row's answer)."""
    import numpy as np

    rows = columns.rows
    if not keyed:
        return [fn([])], np.zeros(len(rows), dtype=np.intp)
    cols = [ids[rows] for ids, _ in keyed]
    if len(cols) == 1:
        uniq, inverse = np.unique(cols[0], return_inverse=True)
        combos = [(i,) for i in uniq.tolist()]
    else:
        uniq, inverse = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)
        combos = [tuple(c) for c in uniq.tolist()]
    answers = [fn([values[i] if i >= 0 else None for (_, values), i in zip(keyed, combo, strict=True)])
               for combo in combos]
    return answers, inverse.reshape(-1)


def by_label_projection(columns: NodeColumns, keys: Sequence[str],
                        fn: Callable[[dict[str, str]], T]) -> tuple[list[T], NDArray[np.intp]]:
    """by_projection over the node labels `keys`: fn gets the node's labels restricted to those keys."""
    table = columns.table
    keyed = [table.label_ids(k) for k in keys]

    def labels_of(values: list[Any]) -> T:
        return fn({k: v for k, v in zip(keys, values, strict=True) if v is not None})

    return by_projection(columns, keyed, labels_of)


def by_node_labels(node_infos: Sequence[NodeInfo], keys: Sequence[str],
                   fn: Callable[[dict[str, str]], T]) -> list[T | None]:
    """by_label_projection without the node table: fn(the node's labels restricted to `keys`, node_facts') once
    per distinct combination of their values among the nodes, for each node in order (None for a NodeInfo
    without a node)."""
    seen: dict[Any, tuple[T]] = {}
    out: list[T | None] = []
    append = out.append
    one = keys[0] if len(keys) == 1 else None
    for ni in node_infos:
        node = ni.node
        if node is None:
            append(None)
            continue
        labels = node_facts(ni, node).labels
        # The values, as a tuple (one key: the value alone, which is cheaper to hash).
        values = labels.get(one) if one is not None else tuple(map(labels.get, keys))
        answer = seen.get(values)
        if answer is None:
            answer = seen[values] = (fn({k: v for k in keys if (v := labels.get(k)) is not None}),)
        append(answer[0])
    return out
