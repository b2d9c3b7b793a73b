"""SchedulePod: filter, score and select a host for one pod (schedule_one.go's schedulePod,
findNodesThatFitPod, findNodesThatPassFilters, prioritizeNodes, selectHost)."""

from __future__ import annotations

import heapq
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING

from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.diagnosis import Diagnosis, FitError
from wasmsched.framework.interface import NodePluginScores, NominatingInfo
from wasmsched.framework.runtime import Framework
from wasmsched.framework.snapshot import Snapshot
from wasmsched.framework.status import Code, Status, is_rejected, is_success, not_success
from wasmsched.framework.types import NodeInfo
from wasmsched.metrics import names as mn
from wasmsched.scheduler.cache import Cache
from wasmsched.scheduler.queue import Nominator

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeTable

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass
class ScheduleResult:
    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    nominating_info: NominatingInfo | None = None


# A summarised explanation keeps this many node names per Filter verdict and this many best-scored nodes.
SUMMARY_NODE_NAMES = 5
SUMMARY_BEST_NODES = 5


@dataclass
class FilterGroup:
    """The nodes that got one Filter verdict (the same plugin, code and reasons) in one attempt."""

    status: Status
    count: int
    # The first SUMMARY_NODE_NAMES node names, sorted.
    nodes: list[str]


@dataclass
class FilterSummary:
    """A Filter walk in numbers: what a report of 20,000 pods on 5,000 nodes can keep for every pod."""

    nodes: int
    passed: int
    # Rejected nodes grouped by verdict, most nodes first; nodes PreFilter ruled out included.
    groups: list[FilterGroup]
    # Nodes the walk did not reach: it found enough feasible ones first (percentageOfNodesToScore).
    not_evaluated: int


@dataclass
class CycleExplain:
    """What --explain reports for one attempt of a pod: the PreFilter outcome, a Filter verdict per
    node (None: passed) and the weighted scores of the feasible nodes when they were scored.

    With `summary`, the walk is kept only as a FilterSummary (`filter` stays empty) and `scores` only
    for the SUMMARY_BEST_NODES best nodes: per node and pod, the full form grows as nodes times pods."""

    filter: dict[str, Status | None] = field(default_factory=dict)
    scores: list[NodePluginScores] = field(default_factory=list)
    pre_filter: Status | None = None
    # PreFilterResult's node names; None: all nodes.
    pre_filter_nodes: set[str] | None = None
    # The pod's nominated node passed and was taken without looking at the others.
    nominated_fast_path: bool = False
    summary: bool = False
    filter_summary: FilterSummary | None = None

    def best(self) -> list[str]:
        """The feasible nodes with the highest total score (one feasible node is not scored: it is the best)."""
        if not self.scores:
            return sorted(n for n, st in self.filter.items() if st is None)
        top = max(s.total_score for s in self.scores)
        return sorted(s.name for s in self.scores if s.total_score == top)


def best_scored(scores: Sequence[NodePluginScores], k: int) -> list[NodePluginScores]:
    """The k best-scored nodes, by total and then name."""
    from wasmsched.framework.nodetable import ScoredNodes

    if isinstance(scores, ScoredNodes):
        return scores.top(k)
    return heapq.nsmallest(k, scores, key=lambda s: (-s.total_score, s.name))


class FeasibleNodes(list[NodeInfo]):
    """The nodes that passed Filter, with their rows in the snapshot's node table when the walk had them
    (so Score can run the plugins' columnar forms)."""

    __slots__ = ("rows", "table")

    def __init__(self, nodes: Sequence[NodeInfo] = (), table: NodeTable | None = None,
                 rows: NDArray[np.intp] | None = None) -> None:
        super().__init__(nodes)
        self.table = table
        self.rows = rows


class SchedulingAlgorithm:
    """SchedulePod for every profile of one scheduler: it owns the rotating start index and the
    tie-breaking random source, and reads nodes from the snapshot it refreshes from the cache."""

    def __init__(self, cache: Cache, snapshot: Snapshot, nominator: Nominator, rng: random.Random | None,
                 percentage_of_nodes_to_score: int | None) -> None:
        self.cache = cache
        self.snapshot = snapshot
        self.nominator = nominator
        self.rng = rng
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        # Filter and Score pass the nodes' rows of the snapshot's node table to the runner, for plugins'
        # columnar forms, when the walk has at least columnar_min_nodes nodes. The results are the same
        # without (tests compare both ways); on small clusters the per-node forms are as fast, and
        # scheduling them does not load numpy (~0.1 s).
        self.columnar = True
        self.columnar_min_nodes = MIN_FEASIBLE_NODES_TO_FIND

    def warm_up(self) -> None:
        """Brings the snapshot up to date and, on a cluster big enough for the columnar passes, builds its
        node table (loading numpy), so that the first cycle does not pay for them. Changes no outcome."""
        self.cache.update_snapshot(self.snapshot)
        if self.columnar and self.snapshot.num_nodes() >= self.columnar_min_nodes:
            self.snapshot.node_table()

    def num_feasible_nodes_to_find(self, fwk: Framework, num_all_nodes: int) -> int:
        if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
            return num_all_nodes
        pct = fwk.percentage_of_nodes_to_score
        if pct is None:
            pct = self.percentage_of_nodes_to_score or 0
        if pct == 0:
            pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
        n = num_all_nodes * pct // 100
        return max(n, MIN_FEASIBLE_NODES_TO_FIND)

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: Pod,
                     explain: CycleExplain | None) -> ScheduleResult:
        snap = self.snapshot
        self.cache.update_snapshot(snap)
        if snap.num_nodes() == 0:
            raise NoNodesAvailable(ERR_NO_NODES_AVAILABLE)
        feasible, diagnosis = self.find_nodes_that_fit_pod(fwk, state, pod, explain)
        if explain is not None:
            self._explain_filter(explain, diagnosis, feasible)
        if not feasible:
            raise FitError(pod, snap.num_nodes(), diagnosis)
        evaluated = len(feasible) + diagnosis.node_to_status.len()
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1)
        scores = self.prioritize_nodes(fwk, state, pod, feasible)
        if explain is not None:
            explain.scores = best_scored(scores, SUMMARY_BEST_NODES) if explain.summary else list(scores)
        return ScheduleResult(self.select_host(scores), evaluated, len(feasible))

    def _explain_filter(self, explain: CycleExplain, diagnosis: Diagnosis, feasible: list[NodeInfo]) -> None:
        """The verdict of every node the cycle decided on, in snapshot order. Nodes PreFilter ruled out get
        the status kube's Diagnosis gives absent nodes; the nominated-node fast path evaluated only its node."""
        if explain.summary:
            explain.filter_summary = self._filter_summary(explain, diagnosis, feasible)
            return
        passed = {ni.name for ni in feasible}
        if explain.nominated_fast_path:
            explain.filter = dict.fromkeys(passed)
            return
        # Nodes PreFilter rejected or left out have the absent-nodes status; other nodes the walk did not
        # reach (node sampling found enough feasible ones first) have no verdict.
        absent = not_success(explain.pre_filter) or explain.pre_filter_nodes is not None
        for ni in self.snapshot.list():
            if ni.name in passed:
                explain.filter[ni.name] = None
            elif absent or diagnosis.node_to_status.has(ni.name):
                explain.filter[ni.name] = diagnosis.node_to_status.get(ni.name)

    def _filter_summary(self, explain: CycleExplain, diagnosis: Diagnosis, feasible: list[NodeInfo]) -> FilterSummary:
        """_explain_filter's verdicts counted per verdict, from the diagnosis alone: no walk over every node."""
        total = self.snapshot.num_nodes()
        if explain.nominated_fast_path:
            return FilterSummary(total, len(feasible), [], 0)
        by_verdict: dict[tuple[str, Code, tuple[str, ...]], tuple[Status, list[str]]] = {}
        statuses = diagnosis.node_to_status.node_to_status
        for node, st in statuses.items():
            key = (st.plugin or "", st.code, tuple(st.reasons))
            entry = by_verdict.get(key)
            if entry is None:
                by_verdict[key] = (st, [node])
            else:
                entry[1].append(node)
        groups = [FilterGroup(st, len(nodes), heapq.nsmallest(SUMMARY_NODE_NAMES, nodes))
                  for st, nodes in by_verdict.values()]
        unreached = total - len(feasible) - len(statuses)
        if unreached and (not_success(explain.pre_filter) or explain.pre_filter_nodes is not None):
            # The nodes PreFilter ruled out: they take the diagnosis' absent-nodes status (_explain_filter).
            absent = diagnosis.node_to_status.absent_nodes_status
            passed = {ni.name for ni in feasible}
            groups.append(FilterGroup(absent, unreached, heapq.nsmallest(
                SUMMARY_NODE_NAMES, (ni.name for ni in self.snapshot.list()
                                     if ni.name not in statuses and ni.name not in passed))))
            unreached = 0
        groups.sort(key=lambda g: (-g.count, g.status.plugin or "", g.status.reasons))
        return FilterSummary(total, len(feasible), groups, unreached)

    def find_nodes_that_fit_pod(self, fwk: Framework, state: CycleState, pod: Pod,
                                explain: CycleExplain | None = None) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        all_nodes = self.snapshot.list()
        pre_res, st, plugins = fwk.run_pre_filter_plugins(state, pod, all_nodes)
        diagnosis.unschedulable_plugins = set(plugins)
        if explain is not None:
            explain.pre_filter = st
            explain.pre_filter_nodes = None if pre_res is None or pre_res.all_nodes() \
                else set(pre_res.node_names or ())
        if not_success(st):
            if not is_rejected(st):
                raise SchedulingError(st.message())
            diagnosis.node_to_status.absent_nodes_status = st
            diagnosis.pre_filter_msg = st.message()
            diagnosis.add_plugin_status(st)
            return [], diagnosis
        if pod.status.nominatedNodeName:
            feasible = self._evaluate_nominated_node(fwk, state, pod, diagnosis)
            if feasible:
                if explain is not None:
                    explain.nominated_fast_path = True
                return feasible, diagnosis
        nodes: Sequence[NodeInfo] = all_nodes
        if pre_res is not None and not pre_res.all_nodes():
            wanted = pre_res.node_names or set()
            nodes = [ni for ni in all_nodes if ni.name in wanted]
            # kube formats the plugin set after the nominated node was tried: the plugins that rejected
            # it are in the set too (it is the Diagnosis' own set, not a copy).
            diagnosis.node_to_status.absent_nodes_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                [f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(diagnosis.unschedulable_plugins))}]"],
            )
        try:
            feasible = self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, nodes)
        except FilterError as e:
            # kube moves the next walk's start past the nodes this one looked at even when a Filter
            # plugin's Error ended it (the nodes before the failing one: feasible, or in the diagnosis)
            processed = e.feasible_before + diagnosis.node_to_status.len()
            self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
            raise
        processed = len(feasible) + diagnosis.node_to_status.len()
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        if self.rng is None and feasible and not fwk.has_score_plugins() and processed < len(nodes):
            feasible = self._filter_the_rest(fwk, state, pod, diagnosis, nodes, feasible)
        return feasible, diagnosis

    def _filter_the_rest(self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis,
                         nodes: Sequence[NodeInfo], feasible: list[NodeInfo]) -> list[NodeInfo]:
        """Without a random source and without score plugins every feasible node is a candidate (the
        lowest name wins), but kube's walk (its verdict, its Errors, how far the next one starts) stopped at
        its first feasible node: the nodes it did not reach are filtered after it, their Errors kept as
        their verdicts only."""
        seen = {ni.name for ni in feasible}
        out = list(feasible)
        for ni in nodes:
            if ni.name in seen or diagnosis.node_to_status.has(ni.name):
                continue
            st = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
            if st is None or is_success(st):
                out.append(ni)
            elif st.code == Code.ERROR:
                diagnosis.node_to_status.set(ni.name, st)
            else:
                self._record(diagnosis, ni, st)
        return out

    def _evaluate_nominated_node(self, fwk: Framework, state: CycleState, pod: Pod,
                                 diagnosis: Diagnosis) -> list[NodeInfo]:
        ni = self.snapshot.get(pod.status.nominatedNodeName)
        if ni is None:
            return []
        try:
            return self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, [ni])
        except FilterError:
            # kube's findNodesThatFitPod only logs the nominated node's Filter error ("Evaluation failed on
            # nominated node") and walks all nodes, whose first Error is the one the cycle fails with
            return []

    def find_nodes_that_pass_filters(self, fwk: Framework, state: CycleState, pod: Pod,
                                     diagnosis: Diagnosis, nodes: Sequence[NodeInfo]) -> list[NodeInfo]:
        n = len(nodes)
        to_find = self.num_feasible_nodes_to_find(fwk, n)
        if not fwk.has_score_plugins():
            # Without scoring every feasible node is as good as any other: the first one will do. (With
            # the lowest-name tie-break, all of them are candidates for the lowest name: find_nodes_that_fit_pod
            # filters the others after this walk.)
            to_find = min(to_find, 1)
        start = self.next_start_node_index % n if n else 0
        ordered = list(nodes[start:]) + list(nodes[:start]) if start else list(nodes)
        table, rows = self._rows_of(nodes, start)
        if not fwk.has_filter_plugins():
            return FeasibleNodes(ordered[:to_find], table, None if rows is None else rows[:to_find])
        m = fwk.scheduler_metrics()
        if m is None:
            return self._walk_filters(fwk, state, pod, diagnosis, ordered, to_find, table, rows)
        # One Filter sample per walk over the nodes (nominated pods included), as kube records it.
        began = perf_counter()
        code = Code.ERROR
        try:
            feasible = self._walk_filters(fwk, state, pod, diagnosis, ordered, to_find, table, rows)
            code = Code.SUCCESS
            return feasible
        finally:
            m.observe_extension_point(mn.FILTER, code, fwk.profile_name(), perf_counter() - began)

    def _rows_of(self, nodes: Sequence[NodeInfo],
                 start: int) -> tuple[NodeTable | None, NDArray[np.intp] | None]:
        """The node table and the rows of `nodes` rotated by `start` (the walk's order), when the nodes
        are the snapshot's; (None, None) otherwise or when columnar passes are off."""
        if not self.columnar or not nodes or len(nodes) < self.columnar_min_nodes:
            return None, None
        snap = self.snapshot
        all_nodes = snap.list()
        if nodes is all_nodes:
            table = snap.node_table()
            return table, table.rotated_rows(start)
        if len(nodes) == 1:
            return None, None  # the nominated node: nothing to gain
        positions = snap.positions
        picked = [positions.get(ni.name, -1) for ni in nodes]
        if min(picked) < 0 or any(all_nodes[r] is not ni for r, ni in zip(picked, nodes, strict=True)):
            return None, None
        import numpy as np

        rows = np.array(picked, dtype=np.intp)
        return snap.node_table(), np.concatenate((rows[start:], rows[:start])) if start else rows

    def _walk_filters(self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis,
                      ordered: list[NodeInfo], to_find: int, table: NodeTable | None = None,
                      rows: NDArray[np.intp] | None = None) -> FeasibleNodes:
        n = len(ordered)
        feasible: list[NodeInfo] = []
        # The feasible nodes' rows, by chunk: (chunk's rows, indexes into them), or None.
        picked: list[tuple[NDArray[np.intp], list[int] | int]] | None = [] if rows is not None else None
        nominator = self.nominator
        pos = 0
        # Nodes are filtered in chunks, plugin by plugin over the chunk (one Python call per plugin
        # instead of per node and plugin). Results are consumed in node order and cut where the
        # wanted number of feasible nodes is reached, so the outcome equals kube's sequential walk.
        # A chunk holds one node more than is wanted: where kube's walk cancels itself (see
        # _walk_to_one_more) is then usually known from the chunk's results.
        size = max(to_find + 1, 32)
        stop = n  # where the wanted number was reached: the position after the last node taken
        chunk: list[NodeInfo] = []
        results: list[Status | None] = []
        while pos < n and len(feasible) < to_find:
            chunk = ordered[pos: pos + size]
            chunk_rows = rows[pos: pos + size] if rows is not None else None
            nominated = nominator.nominated_node_names() if nominator.has_nominated_pods() else frozenset()
            with_nominated = [j for j, ni in enumerate(chunk) if ni.name in nominated] if nominated else []
            if with_nominated:
                # Nodes with nominated pods are filtered with them (per node); on the others that is the same
                # as filtering without (kube's RunFilterPluginsWithNominatedPods adds no pod there).
                results = self._filter_some_with_nominated(fwk, state, pod, chunk, chunk_rows, table,
                                                           with_nominated)
            else:
                columns = None
                if table is not None and chunk_rows is not None:
                    from wasmsched.framework.nodetable import NodeColumns

                    columns = NodeColumns(table, chunk_rows)
                results = fwk.run_filter_plugins_batch(state, pod, chunk, columns)
            need = to_find - len(feasible)
            if results.count(None) == len(results):
                # Every node passed (the usual case): take what is needed without looking at each.
                if need <= len(chunk):
                    stop = pos + need
                feasible.extend(chunk[:need])
                if picked is not None and chunk_rows is not None:
                    picked.append((chunk_rows, min(need, len(chunk))))
            else:
                # The runner's results are None for a node that passed, its failure otherwise.
                taken = [j for j, st in enumerate(results) if st is None][:need]
                end = taken[-1] + 1 if len(taken) == need else len(chunk)
                if len(taken) == need:
                    stop = pos + end
                for j, st in enumerate(results[:end]):
                    if st is None:
                        continue
                    if st.code == Code.ERROR:
                        raise FilterError(st.message(), len(feasible) + results[:j].count(None))
                    self._record(diagnosis, chunk[j], st)
                feasible.extend(chunk[j] for j in taken)
                if picked is not None and chunk_rows is not None:
                    picked.append((chunk_rows, taken))
            pos += len(chunk)
            size = max(to_find - len(feasible) + 1, 32)
            if table is not None:
                # Columnar passes cost per pass more than per node: the next chunk is sized by the share of
                # nodes that passed so far, so a selective pod takes a few passes, not one per 32 nodes.
                passed = len(feasible) / pos
                size = n if passed < 0.05 else max(size, int((to_find - len(feasible)) / passed * 1.2))
        if stop < n:
            # The nodes of the last chunk past `stop` were filtered with it: the walk to one feasible node
            # more goes through their results first.
            for j in range(stop - (pos - len(chunk)), len(chunk)):
                st = results[j]
                if st is None:
                    break
                if st.code == Code.ERROR:
                    raise FilterError(st.message(), len(feasible))
                self._record(diagnosis, chunk[j], st)
            else:
                self._walk_to_one_more(fwk, state, pod, diagnosis, ordered[pos:], len(feasible))
        if picked is None or table is None:
            return FeasibleNodes(feasible)
        import numpy as np

        parts = [r[:k] if isinstance(k, int) else r[k] for r, k in picked]
        feasible_rows = np.concatenate(parts) if len(parts) != 1 else parts[0]
        return FeasibleNodes(feasible, table, feasible_rows)

    def _walk_to_one_more(self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis,
                          rest: list[NodeInfo], found: int) -> None:
        """kube's walk cancels itself when it finds one feasible node more than it wants (that one is
        dropped), not at the last one it keeps: the nodes up to it are filtered, their rejections recorded
        and an Error among them ends the cycle."""
        for ni in rest:
            st = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
            if st is None or is_success(st):
                return
            if st.code == Code.ERROR:
                raise FilterError(st.message(), found)
            self._record(diagnosis, ni, st)

    @staticmethod
    def _filter_some_with_nominated(fwk: Framework, state: CycleState, pod: Pod, chunk: list[NodeInfo],
                                    chunk_rows: NDArray[np.intp] | None, table: NodeTable | None,
                                    with_nominated: list[int]) -> list[Status | None]:
        """Filter results of `chunk`: the nodes at `with_nominated` with their nominated pods, the others
        in a batch (with their rows, when given)."""
        results: list[Status | None] = [None] * len(chunk)
        for j in with_nominated:
            results[j] = fwk.run_filter_plugins_with_nominated_pods(state, pod, chunk[j])
        marked = set(with_nominated)
        others = [j for j in range(len(chunk)) if j not in marked]
        if others:
            columns = None
            if table is not None and chunk_rows is not None:
                from wasmsched.framework.nodetable import NodeColumns

                columns = NodeColumns(table, chunk_rows[others])
            for j, st in zip(others, fwk.run_filter_plugins_batch(state, pod, [chunk[j] for j in others], columns),
                             strict=True):
                results[j] = st
        return results

    @staticmethod
    def _record(diagnosis: Diagnosis, ni: NodeInfo, st: Status) -> None:
        if st.code == Code.ERROR:
            raise SchedulingError(st.message())
        diagnosis.node_to_status.set(ni.name, st)
        diagnosis.add_plugin_status(st)

    def prioritize_nodes(self, fwk: Framework, state: CycleState, pod: Pod,
                         nodes: list[NodeInfo]) -> Sequence[NodePluginScores]:
        if not fwk.has_score_plugins():
            return [NodePluginScores(ni.name, [], 1) for ni in nodes]
        st = fwk.run_pre_score_plugins(state, pod, nodes)
        if not_success(st):
            raise SchedulingError(st.message())
        columns = None
        if isinstance(nodes, FeasibleNodes) and nodes.table is not None and nodes.rows is not None:
            from wasmsched.framework.nodetable import NodeColumns

            columns = NodeColumns(nodes.table, nodes.rows)
        scores, st = fwk.run_score_plugins(state, pod, nodes, columns)
        if not_success(st):
            raise SchedulingError(st.message())
        return scores

    def select_host(self, scores: Sequence[NodePluginScores]) -> str:
        """The best total score; ties broken uniformly at random among the best (as kube's
        reservoir sampling, with one draw), or without a random source by the lowest node name."""
        if not len(scores):
            raise SchedulingError("empty priorityList")  # kube's errEmptyPriorityList
        if not isinstance(scores, list):
            from wasmsched.framework.nodetable import ScoredNodes

            if isinstance(scores, ScoredNodes):
                top = scores.best()
                if len(top) == 1:
                    return scores.name(top[0])
                if self.rng is None:
                    return min(scores.name(i) for i in top)
                # The same draw as choice() over the tied NodePluginScores: it depends on their count only.
                return scores.name(top[self.rng.choice(range(len(top)))])
        best = max(s.total_score for s in scores)
        ties = [s for s in scores if s.total_score == best]
        if len(ties) == 1:
            return ties[0].name
        if self.rng is None:
            return min(t.name for t in ties)
        return self.rng.choice(ties).name


class SchedulingError(RuntimeError):
    """An internal error in a cycle (a plugin Error status): the pod is retried after backoff."""


class FilterError(SchedulingError):
    """A Filter plugin's Error, which ends the walk over the nodes; `feasible_before`: the nodes that passed
    before the failing one."""

    def __init__(self, message: str, feasible_before: int) -> None:
        super().__init__(message)
        self.feasible_before = feasible_before


class NoNodesAvailable(SchedulingError):
    pass
