"""The snapshot's nodes as columns (one row per node, in the snapshot's order), for Filter and Score
plugins that answer for many nodes at once with array operations (their `filter_batch` and `score_batch`).

A row holds what the hot in-tree plugins read of a NodeInfo: allocatable and requested resources,
the pod count, node.spec.unschedulable, the node's taints (as an id into a table of distinct taint
lists) and whether it has image states. The cache keeps the rows in step with the snapshot: a
NodeInfo that changed is re-read into its row when the snapshot takes its clone; a change of the node
order drops the table, which is rebuilt when next asked for.

Only numbers that are exact in int64 and float64 arithmetic go into the array passes: a row holding a
value outside [0, 2**53) is marked irregular, and the plugins answer per node (Python integers) while
the table has any, so both paths give identical results.

This module imports numpy; it is imported on the first scheduling cycle, not at start-up.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

if "numpy" not in sys.modules:
    # numpy's OpenBLAS starts worker threads at import that spin on the CPU (on 2 cores, a fifth of one
    # taken from the scheduler and everything else). These passes use no BLAS routine: one thread,
    # unless the environment says otherwise.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from wasmsched.framework.interface import NodePluginScores
from wasmsched.framework.memo import MemoKey
from wasmsched.framework.node_facts import node_facts
from wasmsched.framework.types import ImageStateSummary, NodeInfo

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wasmsched.api.types import Taint

# Column indexes of NodeTable.values.
ALLOC_CPU, ALLOC_MEMORY, ALLOC_EPHEMERAL, ALLOC_PODS = 0, 1, 2, 3
REQ_CPU, REQ_MEMORY, REQ_EPHEMERAL = 4, 5, 6
NONZERO_CPU, NONZERO_MEMORY = 7, 8
NUM_PODS = 9
_COLUMNS = 10

# Values at or above this are not exact in float64 and may overflow int64 once scaled by a score.
EXACT_LIMIT = 1 << 53

# How many changed rows NodeTable.memoized_rows recomputes one by one rather than in one array pass, and how
# many keys it keeps.
_ROWS_ONE_BY_ONE = 16
_ROW_MEMO_ENTRIES = 32

# Taint lists, by a row's `taint_id`; id 0 is "no taints".
NO_TAINTS = 0


class NodeTable:
    """Columns over `infos` (the snapshot's node list itself, so row i is infos[i])."""

    __slots__ = ("_images", "_labels", "_row_memo", "_rows_twice", "_taint_ids", "has_images",
                 "image_rows", "infos", "irregular", "irregular_rows", "row_version", "taint_id", "taint_lists",
                 "tainted_rows", "unschedulable", "unschedulable_rows", "values", "version")

    def __init__(self, infos: list[NodeInfo]) -> None:
        n = len(infos)
        self.infos = infos
        self.values: NDArray[np.int64] = np.zeros((n, _COLUMNS), dtype=np.int64)
        self.irregular: NDArray[np.bool_] = np.zeros(n, dtype=np.bool_)
        self.unschedulable: NDArray[np.bool_] = np.zeros(n, dtype=np.bool_)
        self.has_images: NDArray[np.bool_] = np.zeros(n, dtype=np.bool_)
        self.taint_id: NDArray[np.int32] = np.zeros(n, dtype=np.int32)
        # Distinct taint lists seen (by value), and their ids; they only grow while the table lives.
        self.taint_lists: list[tuple[Taint, ...]] = [()]
        self._taint_ids: dict[tuple[tuple[str, str, str], ...], int] = {(): NO_TAINTS}
        # How many rows have each flag: a pass skips what no row has.
        self.irregular_rows = 0
        self.unschedulable_rows = 0
        self.tainted_rows = 0
        self.image_rows = 0
        # Label columns, made when a plugin first asks for a key: (value id per row, -1 where the node
        # lacks the label; the values by id; the ids by value).
        self._labels: dict[str, tuple[NDArray[np.int32], list[str], dict[str, int]]] = {}
        # Image columns alike, by image name: the node's ImageStateSummary of it.
        self._images: dict[str, tuple[NDArray[np.int32], list[ImageStateSummary], dict[ImageStateSummary, int]]] = {}
        # Row changes: `version` counts set_row calls, row_version[i] is the version that last set row i.
        self.version = 0
        self.row_version: NDArray[np.int64] = np.zeros(n, dtype=np.int64)
        # memoized_rows' entries: (key, args) -> [values of every row, the version they are of].
        self._row_memo: dict[tuple[MemoKey[Any], Hashable], list[Any]] = {}
        # 0..n-1 twice, read-only: every rotation of the rows is a view of it.
        self._rows_twice: NDArray[np.intp] | None = None
        # Built column by column (one conversion each) rather than row by row as set_row does.
        vals = [_row_values(ni) for ni in infos]
        irregular = [not all(0 <= v < EXACT_LIMIT for v in row) for row in vals]
        if any(irregular):
            vals = [(0,) * _COLUMNS if bad else row for row, bad in zip(vals, irregular, strict=True)]
        if vals:
            self.values[:] = vals
        self.irregular[:] = irregular
        facts = [self._node_facts(ni) for ni in infos]
        self.unschedulable[:] = [f[0] for f in facts]
        self.taint_id[:] = [f[1] for f in facts]
        self.has_images[:] = [bool(ni.image_states) for ni in infos]
        self.irregular_rows = int(self.irregular.sum())
        self.unschedulable_rows = int(self.unschedulable.sum())
        self.tainted_rows = int(np.count_nonzero(self.taint_id))
        self.image_rows = int(self.has_images.sum())

    def __len__(self) -> int:
        return len(self.infos)

    def set_row(self, row: int, ni: NodeInfo) -> None:
        """Re-reads row `row` from `ni` (which the snapshot now holds at that position)."""
        self.irregular_rows -= int(self.irregular[row])
        self.unschedulable_rows -= int(self.unschedulable[row])
        self.tainted_rows -= int(self.taint_id[row] != NO_TAINTS)
        self.image_rows -= int(self.has_images[row])
        self._fill(row, ni)
        self.version += 1
        self.row_version[row] = self.version

    def rotated_rows(self, start: int) -> NDArray[np.intp]:
        """rotated_rows(len(self), start), as a read-only view (no array made per cycle)."""
        twice = self._rows_twice
        if twice is None:
            n = len(self.infos)
            twice = self._rows_twice = np.concatenate((np.arange(n, dtype=np.intp), np.arange(n, dtype=np.intp)))
            twice.flags.writeable = False
        return twice[start: start + len(self.infos)]

    def memoized_rows(self, key: MemoKey[Any], args: Hashable, rows: NDArray[np.intp],
                      compute: Callable[[NDArray[np.intp]], NDArray[Any]],
                      compute_row: Callable[[NodeInfo], Any]) -> NDArray[Any]:
        """A value per row that depends only on the row's NodeInfo and on `args` (e.g. a score for pods of
        one shape; `key` is owned by what computes it), at `rows`. It is computed for every row once
        (compute(rows) -> their numbers, an array pass), then only for the rows set since, one by one with
        compute_row (the same value for one node): a scheduling cycle changes one row, and consecutive pods
        are often of one shape. The only cache of such values: the plugins keep none of their own."""
        memo_key = (key, args)
        entry = self._row_memo.get(memo_key)
        if entry is None:
            if len(self._row_memo) >= _ROW_MEMO_ENTRIES:
                del self._row_memo[next(iter(self._row_memo))]  # the oldest key
            every = compute(np.arange(len(self.infos), dtype=np.intp))
            entry = self._row_memo[memo_key] = [every, self.version]
        elif entry[1] != self.version:
            every, seen = entry
            changed = np.flatnonzero(self.row_version > seen).tolist()
            if len(changed) > _ROWS_ONE_BY_ONE:
                at = np.array(changed, dtype=np.intp)
                every[at] = compute(at)
            else:
                infos = self.infos
                for r in changed:
                    every[r] = compute_row(infos[r])
            entry[1] = self.version
        return entry[0][rows]  # type: ignore[no-any-return]

    def _fill(self, row: int, ni: NodeInfo) -> None:
        vals = _row_values(ni)
        irregular = not all(0 <= v < EXACT_LIMIT for v in vals)
        self.values[row] = (0,) * _COLUMNS if irregular else vals
        self.irregular[row] = irregular
        self.irregular_rows += irregular
        unschedulable, tid = self._node_facts(ni)
        self.unschedulable[row] = unschedulable
        self.unschedulable_rows += unschedulable
        self.taint_id[row] = tid
        self.tainted_rows += tid != NO_TAINTS
        images = bool(ni.image_states)
        self.has_images[row] = images
        self.image_rows += images
        if self._labels:
            labels = _labels(ni)
            for key, (ids, values, by_value) in self._labels.items():
                ids[row] = _value_id(labels, key, values, by_value)
        for name, (ids, states, by_state) in self._images.items():
            ids[row] = _value_id(ni.image_states, name, states, by_state)

    def label_ids(self, key: str) -> tuple[NDArray[np.int32], list[str]]:
        """The label `key` of every row as an id into the returned values (-1: the node lacks it)."""
        col = self._labels.get(key)
        if col is None:
            values: list[str] = []
            by_value: dict[str, int] = {}
            ids = np.fromiter((_value_id(_labels(ni), key, values, by_value) for ni in self.infos),
                              dtype=np.int32, count=len(self.infos))
            col = self._labels[key] = (ids, values, by_value)
        return col[0], col[1]

    def image_ids(self, name: str) -> tuple[NDArray[np.int32], list[ImageStateSummary]]:
        """The image state of image `name` on every row as an id into the returned states (-1: not there)."""
        col = self._images.get(name)
        if col is None:
            values: list[ImageStateSummary] = []
            by_value: dict[ImageStateSummary, int] = {}
            ids = np.fromiter((_value_id(ni.image_states, name, values, by_value) for ni in self.infos),
                              dtype=np.int32, count=len(self.infos))
            col = self._images[name] = (ids, values, by_value)
        return col[0], col[1]

    def _node_facts(self, ni: NodeInfo) -> tuple[bool, int]:
        """(node.spec.unschedulable, the id of the node's taint list)."""
        node = ni.node
        if node is None:
            return False, NO_TAINTS
        f = node_facts(ni, node)
        tid = self._taint_ids.get(f.taints_key)
        if tid is None:
            tid = len(self.taint_lists)
            self._taint_ids[f.taints_key] = tid
            self.taint_lists.append(f.taints)
        return f.unschedulable, tid

    def regular(self) -> bool:
        """Whether every row's numbers are exact in the array passes."""
        return self.irregular_rows == 0


def _row_values(ni: NodeInfo) -> tuple[int, ...]:
    """The row's numbers, in column order."""
    alloc, req, nz = ni.allocatable, ni.requested, ni.non_zero_requested
    return (alloc.milli_cpu, alloc.memory, alloc.ephemeral_storage, alloc.allowed_pod_number,
            req.milli_cpu, req.memory, req.ephemeral_storage, nz.milli_cpu, nz.memory, len(ni.pods))


def _labels(ni: NodeInfo) -> Mapping[str, str]:
    """The node's labels (read once per node object, framework/node_facts.py); none without a node."""
    node = ni.node
    return _NO_LABELS if node is None else node_facts(ni, node).labels


_NO_LABELS: Mapping[str, str] = {}


V = TypeVar("V", bound=Hashable)


def _value_id(mapping: Mapping[str, V], key: str, values: list[V], by_value: dict[V, int]) -> int:
    v = mapping.get(key)
    if v is None:
        return -1
    i = by_value.get(v)
    if i is None:
        i = by_value[v] = len(values)
        values.append(v)
    return i


def rotated_rows(n: int, start: int) -> NDArray[np.intp]:
    """Rows start, start+1, ..., n-1, 0, ..., start-1 (the walk's order from the rotating start index)."""
    rows = np.arange(n, dtype=np.intp)
    return np.concatenate((rows[start:], rows[:start])) if start else rows


class NodeColumns:
    """Some nodes of a cycle as rows of the table: node_infos[i] is table.infos[rows[i]]."""

    __slots__ = ("_values", "rows", "table")

    def __init__(self, table: NodeTable, rows: NDArray[np.intp]) -> None:
        self.table = table
        self.rows = rows
        self._values: NDArray[np.int64] | None = None

    def values(self) -> NDArray[np.int64]:
        """table.values at the rows (gathered once, shared by the plugins of one pass; read-only)."""
        v = self._values
        if v is None:
            v = self._values = self.table.values[self.rows]
            v.flags.writeable = False
        return v

    def take(self, which: NDArray[np.intp] | NDArray[np.bool_]) -> NodeColumns:
        return NodeColumns(self.table, self.rows[which])


class ScoredNodes(Sequence[NodePluginScores]):
    """The weighted scores of a cycle's nodes as arrays (one row per Score plugin); a node's
    NodePluginScores is made only when read (explain, tests): selecting the host needs the totals."""

    __slots__ = ("nodes", "plugins", "totals", "weighted")

    def __init__(self, nodes: Sequence[NodeInfo], plugins: tuple[str, ...],
                 weighted: NDArray[np.int64] | Sequence[NDArray[np.int64]]) -> None:
        """`weighted`: one row per plugin (in `plugins` order) of the nodes' weighted scores."""
        self.nodes = nodes
        self.plugins = plugins
        matrix = np.asarray(weighted, dtype=np.int64).reshape(len(plugins), len(nodes))
        self.weighted: NDArray[np.int64] = matrix
        self.totals: NDArray[np.int64] = matrix.sum(axis=0)

    def name(self, i: int) -> str:
        return self.nodes[i].name

    def __len__(self) -> int:
        return len(self.nodes)

    @overload
    def __getitem__(self, i: int) -> NodePluginScores: ...

    @overload
    def __getitem__(self, i: slice) -> list[NodePluginScores]: ...

    def __getitem__(self, i: int | slice) -> NodePluginScores | list[NodePluginScores]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return NodePluginScores(self.name(i), None, int(self.totals[i]), self.plugins,
                                tuple(int(w[i]) for w in self.weighted))

    def top(self, k: int) -> list[NodePluginScores]:
        """The k best nodes by total, then name (a summarised explanation): only those are materialised."""
        n = len(self)
        if n > k:
            kth = np.partition(self.totals, n - k)[n - k]
            candidates = np.flatnonzero(self.totals >= kth).tolist()
        else:
            candidates = list(range(n))
        candidates.sort(key=lambda i: (-int(self.totals[i]), self.name(i)))
        return [self[i] for i in candidates[:k]]

    def best(self) -> list[int]:
        """Indexes of the nodes with the highest total, in node order."""
        top = self.totals.max()
        return np.flatnonzero(self.totals == top).tolist()
