"""Helpers for plugins' columnar forms (framework/nodetable.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeColumns

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import ScorePlugin
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo

T = TypeVar("T")


class ZeroScoresFastPath(ScorePlugin):
    """A Score plugin that kube runs for every pod but that scores every node 0 for most of them (no
    volume, no claim): `scores_nothing(state)` says so, and the whole pass is one answer instead of a
    call per node. Normalized zeros stay zeros (DefaultNormalizeScore), so the columnar answer holds
    for plugins with a NormalizeScore too."""

    def scores_nothing(self, state: CycleState) -> bool:
        raise NotImplementedError

    def score_nodes(self, state: CycleState, pod: Any,
                    node_infos: Sequence[NodeInfo]) -> tuple[list[int], Status | None]:
        if self.scores_nothing(state):
            return [0] * len(node_infos), None
        return super().score_nodes(state, pod, node_infos)

    def score_columns(self, state: CycleState, pod: Any, columns: NodeColumns) -> NDArray[np.int64] | None:
        if not self.scores_nothing(state):
            return None
        import numpy as np  # loaded with the node table

        return np.zeros(len(columns.rows), dtype=np.int64)

    def score_columns_unnormalized(self, state: CycleState, pod: Any, columns: NodeColumns) -> NDArray[np.int64] | None:
        return self.score_columns(state, pod, columns)

    def normalize_columns(self, state: CycleState, pod: Any, scores: NDArray[np.int64]) -> NDArray[np.int64] | None:
        # Zeros: what DefaultNormalizeScore (not reversed) leaves them; anything else, per node.
        return None if scores.any() else scores.copy()


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
