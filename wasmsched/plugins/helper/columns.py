"""Helpers for plugins' columnar forms (framework/nodetable.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeColumns

T = TypeVar("T")


def by_label_projection(columns: NodeColumns, keys: Sequence[str],
                        fn: Callable[[dict[str, str]], T]) -> tuple[list[T], NDArray[np.intp]]:
    """fn(labels) once per distinct projection of the rows' node labels onto `keys` (the node's labels
    restricted to those keys), for answers that depend on those labels only: (the answers, the index of
    each row's answer)."""
    import numpy as np

    rows = columns.rows
    if not keys:
        return [fn({})], np.zeros(len(rows), dtype=np.intp)
    table = columns.table
    cols = []
    values = []
    for k in keys:
        ids, vals = table.label_ids(k)
        cols.append(ids[rows])
        values.append(vals)
    if len(cols) == 1:
        uniq, inverse = np.unique(cols[0], return_inverse=True)
        projections = [(i,) for i in uniq.tolist()]
    else:
        uniq, inverse = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)
        projections = [tuple(p) for p in uniq.tolist()]
    answers = [fn({k: values[j][i] for j, (k, i) in enumerate(zip(keys, p, strict=True)) if i >= 0})
               for p in projections]
    return answers, inverse.reshape(-1)
