"""The resource-allocation scorer shared by NodeResourcesFit and BalancedAllocation
(noderesources/resource_allocation.go).

Per configured resource it pairs the node's allocatable with the node's requested amount plus the
pod's request. CPU and memory use the "non-zero" requests (containers without a request count
100m / 200Mi) unless `use_requested` is set; ephemeral-storage and scalar resources always use the
plain requests. Resources the node does not allocate (allocatable 0), and scalar resources the pod
does not request, are left out of the score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from wasmsched.api import resources as res
from wasmsched.api.types import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import BatchScores, NodeBatch
from wasmsched.framework.memo import MemoKey
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

    from wasmsched.framework.nodetable import NodeTable

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

    __slots__ = ("_cpu_mem", "_requests_key", "_scores_key", "_specs", "cpu_mem_columns_fn",
                 "enable_pod_level_resources", "name", "resources", "scorer", "use_requested")

    def __init__(self, name: str, scorer: ScorerFn, resources: Sequence[ResourceSpecLike],
                 use_requested: bool = False, enable_pod_level_resources: bool = True,
                 cpu_mem_columns_fn: CpuMemColumnsFn | None = None) -> None:
        self.name = name
        self.scorer = scorer
        # Optional: the scorer's columnar form for the (cpu, memory) configuration (numpy, where it pays: the
        # node table's rows of a new pod shape at once); `scorer` is the one reference per node.
        self.cpu_mem_columns_fn = cpu_mem_columns_fn
        # This scorer's keys: its pod request lists in the PodShape memo, its scores in the node table's.
        self._requests_key: MemoKey[list[int]] = MemoKey(f"{name}.requests")
        self._scores_key: MemoKey[int] = MemoKey(f"{name}.scores")
        self.resources = list(resources)
        # BalancedAllocation scores the plain requests; the Fit strategies the non-zero ones.
        self.use_requested = use_requested
        # kube 1.37 builds NodeResourcesFit's scorer without its enablePodLevelResources, so the Fit
        # strategies score container requests only, while BalancedAllocation honours spec.resources.
        self.enable_pod_level_resources = enable_pod_level_resources
        self._specs = [
            (_KINDS.get(r.name, _OTHER), r.name, res.is_scalar_resource_name(r.name)) for r in self.resources
        ]
        # The default configuration, cpu then memory, which has a shortcut per node and a columnar form.
        self._cpu_mem = [kind for kind, _, _ in self._specs] == [_CPU, _MEMORY]

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

            return shape_memoized(state, pod, self._requests_key, from_pod_info)

        def from_inputs(p: Pod) -> list[int]:
            return self.calculate_pod_resource_request_list(
                pod_memoized(state, p, POD_REQUEST_INPUTS_MEMO, res.pod_request_inputs))

        return shape_memoized(state, pod, self._requests_key, from_inputs)

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

    def score_batch(self, batch: NodeBatch, pod_requests: Sequence[int]) -> tuple[BatchScores, Status | None]:
        """score() for every node of the batch.

        With the nodes' rows in the node table, from the table's scores for this pod request
        (NodeTable.memoized_rows, the one cache of them: a score depends only on the node's allocatable and
        requests and on the pod's request, so it is computed once per row and pod shape, then again only
        for the rows that changed, i.e. the node the previous pod went to), in one array pass by the
        scorer's columnar form where it applies. Without rows (a small cluster, nodes not the snapshot's),
        node by node, as kube does.
        """
        if not self.resources:
            return [], Status.error("resources not found")
        score_node = self._node_scorer(pod_requests)
        columns = batch.columns
        if columns is None:
            return [score_node(ni) for ni in batch.node_infos], None
        return columns.table.memoized_rows(self._scores_key, tuple(pod_requests), columns.rows,
                                           self._rows_scorer(columns.table, pod_requests, score_node),
                                           score_node), None

    def _node_scorer(self, pod_requests: Sequence[int]) -> Callable[[NodeInfo], int]:
        """score() of one node for `pod_requests` (the default cpu + memory configuration takes a shortcut)."""
        if self._cpu_mem:
            scorer, use_requested = self.scorer, self.use_requested
            pod_cpu, pod_mem = pod_requests[0], pod_requests[1]
            return lambda ni: score_cpu_mem(ni, pod_cpu, pod_mem, scorer, use_requested)
        return lambda ni: self.score(ni, pod_requests)[0]

    def _rows_scorer(self, table: NodeTable, pod_requests: Sequence[int],
                     score_node: Callable[[NodeInfo], int]) -> Callable[[NDArray[np.intp]], NDArray[np.int64]]:
        """The scores of the table's nodes at some rows: the columnar form of the (cpu, memory) configuration
        where it applies (values exact in the array pass), else node by node."""
        import numpy as np

        from wasmsched.framework import nodetable as nt

        fn = self.cpu_mem_columns_fn
        pod_cpu, pod_mem = (pod_requests[0], pod_requests[1]) if self._cpu_mem else (-1, -1)
        if fn is None or not table.regular() or not (0 <= pod_cpu < nt.EXACT_LIMIT and 0 <= pod_mem < nt.EXACT_LIMIT):
            infos = table.infos
            return lambda rows: np.fromiter((score_node(infos[r]) for r in rows.tolist()), dtype=np.int64,
                                            count=len(rows))
        used_cpu_col, used_mem_col = (nt.REQ_CPU, nt.REQ_MEMORY) if self.use_requested else \
            (nt.NONZERO_CPU, nt.NONZERO_MEMORY)

        def compute(rows: NDArray[np.intp]) -> NDArray[np.int64]:
            v = table.values[rows]
            return fn(v[:, nt.ALLOC_CPU], v[:, nt.ALLOC_MEMORY], v[:, used_cpu_col], v[:, used_mem_col], pod_cpu,
                      pod_mem)

        return compute


def score_cpu_mem(ni: NodeInfo, pod_cpu: int, pod_mem: int, scorer: ScorerFn, use_requested: bool) -> int:
    """score() of one node in the (cpu, memory) configuration, without the per-resource loop."""
    alloc = ni.allocatable
    used = ni.requested if use_requested else ni.non_zero_requested
    a_cpu, a_mem = alloc.milli_cpu, alloc.memory
    u_cpu = used.milli_cpu if a_cpu else 0
    u_mem = used.memory if a_mem else 0
    return scorer((u_cpu + pod_cpu if a_cpu else 0, u_mem + pod_mem if a_mem else 0), (u_cpu, u_mem), (a_cpu, a_mem))
