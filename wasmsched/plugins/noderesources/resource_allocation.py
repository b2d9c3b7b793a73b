"""The resource-allocation scorer shared by NodeResourcesFit and BalancedAllocation
(noderesources/resource_allocation.go).

Per configured resource it pairs the node's allocatable with the node's requested amount plus the
pod's request. CPU and memory use the "non-zero" requests (containers without a request count
100m / 200Mi) unless `use_requested` is set; ephemeral-storage and scalar resources always use the
plain requests. Resources the node does not allocate (allocatable 0), and scalar resources the pod
does not request, are left out of the score.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from wasmsched.api import resources as res
from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import BatchScores, NodeBatch
from wasmsched.framework.node_facts import MAX_MEMO_ENTRIES, token
from wasmsched.framework.status import Status
from wasmsched.framework.types import (
    POD_REQUEST_INPUTS_MEMO,
    POD_REQUESTS_MEMO,
    RESOURCE_CPU,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_MEMORY,
    NodeInfo,
)
from wasmsched.plugins.helper.gomath import div_trunc
from wasmsched.plugins.helper.podmemo import pod_memoized, shape_memoized

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from wasmsched.framework.nodetable import NodeColumns

# scorer(requested, allocated, allocatable) -> score. `requested` includes the incoming pod,
# `allocated` is the node's usage before it; entries of resources left out are 0 everywhere.
ScorerFn = Callable[[Sequence[int], Sequence[int], Sequence[int]], int]

# A scorer's fast form for the (cpu, memory) configuration: (node, pod cpu, pod memory, scorer,
# use_requested) -> the score `scorer` gives the node (score_cpu_mem is the reference form).

# A scorer's columnar form for the (cpu, memory) configuration: (node cpu allocatable, memory allocatable,
# cpu used, memory used, pod cpu, pod memory) as int64 arrays and ints -> the scores, as score_cpu_mem
# gives them. Used only on values exact in int64/float64 (framework/nodetable.py).
CpuMemColumnsFn = Callable[["NDArray[np.int64]", "NDArray[np.int64]", "NDArray[np.int64]", "NDArray[np.int64]",
                            int, int], "NDArray[np.int64]"]

_memo_ids = itertools.count()

_CPU, _MEMORY, _EPHEMERAL, _OTHER = 0, 1, 2, 3
_KINDS = {RESOURCE_CPU: _CPU, RESOURCE_MEMORY: _MEMORY, RESOURCE_EPHEMERAL_STORAGE: _EPHEMERAL}


class ResourceSpecLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> int: ...


def weighted_mean_scorer(resources: Sequence[ResourceSpecLike],
                         resource_score: Callable[[int, int], int]) -> ScorerFn:
    """The loop of leastResourceScorer and mostResourceScorer: the weighted mean (Go integer
    division) of resource_score(requested, allocatable) over the resources the node allocates."""
    weights = [r.weight for r in resources]

    def scorer(requested: Sequence[int], _allocated: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            weight = weights[i]
            node_score += resource_score(requested[i], capacity) * weight
            weight_sum += weight
        if weight_sum == 0:
            return 0
        return div_trunc(node_score, weight_sum)

    return scorer


def pod_resource_requests(pod: Pod | res.PodRequestInputs, non_zero: bool, pod_level: bool = True) -> dict[str, int]:
    """calculatePodResourceRequest's resource.PodRequests: status resources considered (in-place
    resize is GA), cpu in milli-CPU; non_zero gives containers without a cpu / memory request the
    scheduler's defaults (NonMissingContainerRequests); pod_level False ignores spec.resources."""
    if non_zero:
        return res.pod_requests_with_defaults(pod, skip_pod_level=not pod_level)
    return res.pod_requests(pod, skip_pod_level=not pod_level)


class ResourceAllocationScorer:
    """resourceAllocationScorer: the resources to score, their scorer, and which requests to use."""

    __slots__ = ("_memo_key", "_specs", "cpu_mem_columns_fn", "enable_pod_level_resources", "name", "resources",
                 "scorer", "use_requested")

    def __init__(self, name: str, scorer: ScorerFn, resources: Sequence[ResourceSpecLike],
                 use_requested: bool = False, enable_pod_level_resources: bool = True,
                 cpu_mem_columns_fn: CpuMemColumnsFn | None = None) -> None:
        self.name = name
        self.scorer = scorer
        # Optional: the scorer's columnar form for the (cpu, memory) configuration (numpy, where it pays: the
        # node table's rows of a new pod shape at once); `scorer` is the one reference per node.
        self.cpu_mem_columns_fn = cpu_mem_columns_fn
        # This scorer's entry in the NodeInfo memo (see score_nodes).
        self._memo_key = f"noderesources.scores#{next(_memo_ids)}"
        self.resources = list(resources)
        # BalancedAllocation scores the plain requests; the Fit strategies the non-zero ones.
        self.use_requested = use_requested
        # kube 1.37 builds NodeResourcesFit's scorer without its enablePodLevelResources, so the Fit
        # strategies score container requests only, while BalancedAllocation honours spec.resources.
        self.enable_pod_level_resources = enable_pod_level_resources
        self._specs = [
            (_KINDS.get(r.name, _OTHER), r.name, res.is_scalar_resource_name(r.name)) for r in self.resources
        ]

    def calculate_pod_resource_request_list(self, pod: Pod | res.PodRequestInputs) -> list[int]:
        """The pod's request of each configured resource, in the order of `resources`."""
        reqs = pod_resource_requests(pod, non_zero=not self.use_requested, pod_level=self.enable_pod_level_resources)
        return [reqs.get(r.name, 0) for r in self.resources]

    def pod_resource_request_list(self, state: CycleState, pod: Pod) -> list[int]:
        """calculate_pod_resource_request_list, memoized for the pods of the shape of the cycle's pod (a shared
        list: read only)."""
        if self.use_requested and self.enable_pod_level_resources:
            # The plain requests with pod-level resources: what the PodInfo computed when it was made.
            def from_pod_info(p: Pod) -> list[int]:
                reqs = pod_memoized(state, p, POD_REQUESTS_MEMO, res.pod_requests)
                return [reqs.get(r.name, 0) for r in self.resources]

            return shape_memoized(state, pod, self._memo_key, from_pod_info)

        def from_inputs(p: Pod) -> list[int]:
            return self.calculate_pod_resource_request_list(
                pod_memoized(state, p, POD_REQUEST_INPUTS_MEMO, res.pod_request_inputs))

        return shape_memoized(state, pod, self._memo_key, from_inputs)

    @staticmethod
    def is_best_effort_pod(pod_requests: Sequence[int]) -> bool:
        return not any(pod_requests)

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> tuple[int, Status | None]:
        if not self.resources:
            return 0, Status.error("resources not found")
        n = len(self.resources)
        requested = [0] * n
        allocated = [0] * n
        allocatable = [0] * n
        alloc = node_info.allocatable
        node_requested = node_info.requested
        # cpu and memory of the node come from the same kind of requests as the pod's.
        cpu_mem = node_requested if self.use_requested else node_info.non_zero_requested
        for i, (kind, name, scalar) in enumerate(self._specs):
            pod_request = pod_requests[i]
            if kind == _CPU:
                a, used = alloc.milli_cpu, cpu_mem.milli_cpu
            elif kind == _MEMORY:
                a, used = alloc.memory, cpu_mem.memory
            elif kind == _EPHEMERAL:
                a, used = alloc.ephemeral_storage, node_requested.ephemeral_storage
            else:
                # An extended resource the pod does not request is bypassed, so nodes without it
                # are not favoured by pods that do not need it.
                if pod_request == 0 and scalar:
                    continue
                a = alloc.scalar_resources.get(name, 0)
                used = node_requested.scalar_resources.get(name, 0)
            if a == 0:
                continue
            allocatable[i] = a
            requested[i] = used + pod_request
            allocated[i] = used
        return self.scorer(requested, allocated, allocatable), None

    def score_nodes(self, node_infos: Sequence[NodeInfo],
                    pod_requests: Sequence[int]) -> tuple[list[int], Status | None]:
        """score() for every node.

        A score depends only on the node's allocatable and requests and on the pod's requests, so
        it is memoized per NodeInfo version (NodeInfo.generation changes with every pod added or
        removed, and the memo is replaced with the node object) and per pod request: pods of the
        same shape reuse the scores of the nodes that did not change since.
        """
        if not self.resources:
            return [], Status.error("resources not found")
        compute: Callable[[NodeInfo], int]
        if len(self._specs) == 2 and self._specs[0][0] == _CPU and self._specs[1][0] == _MEMORY:
            # The default cpu + memory configuration takes a shortcut.
            fn = score_cpu_mem
            scorer = self.scorer
            pod_cpu, pod_mem = pod_requests[0], pod_requests[1]
            use_requested = self.use_requested

            def compute(ni: NodeInfo) -> int:
                return fn(ni, pod_cpu, pod_mem, scorer, use_requested)
        else:
            def compute(ni: NodeInfo) -> int:
                return self.score(ni, pod_requests)[0]
        memo_key = self._memo_key
        pod_key = token((memo_key, *pod_requests))
        out: list[int] = []
        append = out.append
        for ni in node_infos:
            memo = ni.memo()
            generation = ni.generation
            entry = memo.get(memo_key)
            if entry is None or entry[0] != generation:
                entry = (generation, {})
                memo[memo_key] = entry
            scores: dict[int, int] = entry[1]
            score = scores.get(pod_key)
            if score is None:
                score = compute(ni)
                if len(scores) >= MAX_MEMO_ENTRIES:
                    scores.clear()
                scores[pod_key] = score
            append(score)
        return out, None


    def score_batch(self, batch: NodeBatch, pod_requests: Sequence[int]) -> tuple[BatchScores, Status | None]:
        """score() for every node of the batch: from the node table's columns where they apply, else node
        by node."""
        if batch.columns is not None:
            scores = self.score_columns(batch.columns, pod_requests)
            if scores is not None:
                return scores, None
        return self.score_nodes(batch.node_infos, pod_requests)

    def score_columns(self, columns: NodeColumns, pod_requests: Sequence[int]) -> NDArray[np.int64] | None:
        """score_nodes() for the nodes at `columns`, with the columnar form of the (cpu, memory)
        configuration; None where that form does not apply (other resources, values not exact)."""
        fn = self.cpu_mem_columns_fn
        if fn is None or len(self._specs) != 2 or self._specs[0][0] != _CPU or self._specs[1][0] != _MEMORY:
            return None
        from wasmsched.framework import nodetable as nt

        table = columns.table
        pod_cpu, pod_mem = pod_requests[0], pod_requests[1]
        if not table.regular() or not (0 <= pod_cpu < nt.EXACT_LIMIT and 0 <= pod_mem < nt.EXACT_LIMIT):
            return None
        used_cpu_col, used_mem_col = (nt.REQ_CPU, nt.REQ_MEMORY) if self.use_requested else \
            (nt.NONZERO_CPU, nt.NONZERO_MEMORY)

        def compute(rows: NDArray[np.intp]) -> NDArray[np.int64]:
            v = table.values[rows]
            return fn(v[:, nt.ALLOC_CPU], v[:, nt.ALLOC_MEMORY], v[:, used_cpu_col], v[:, used_mem_col], pod_cpu,
                      pod_mem)

        scorer, use_requested = self.scorer, self.use_requested

        def compute_row(ni: NodeInfo) -> int:
            return score_cpu_mem(ni, pod_cpu, pod_mem, scorer, use_requested)

        # A node's score depends on its row and the pod's (cpu, memory) only: kept per shape of pod, and
        # recomputed for the rows that changed since (the node the previous pod went to).
        return table.memoized_rows((self._memo_key, pod_cpu, pod_mem), columns.rows, compute, compute_row)


def score_cpu_mem(ni: NodeInfo, pod_cpu: int, pod_mem: int, scorer: ScorerFn, use_requested: bool) -> int:
    """One node of ResourceAllocationScorer.score_nodes' (cpu, memory) path."""
    alloc = ni.allocatable
    used = ni.requested if use_requested else ni.non_zero_requested
    a_cpu, a_mem = alloc.milli_cpu, alloc.memory
    u_cpu = used.milli_cpu if a_cpu else 0
    u_mem = used.memory if a_mem else 0
    return scorer((u_cpu + pod_cpu if a_cpu else 0, u_mem + pod_mem if a_mem else 0), (u_cpu, u_mem), (a_cpu, a_mem))
