"""NodeResourcesBalancedAllocation (noderesources/balanced_allocation.go).

Favors nodes whose resource usage becomes more balanced with the pod: the balance of a node is
(1 - std) * MaxNodeScore over the requested/allocatable fractions of the configured resources
(default cpu and memory), and the score rewards the change the pod brings to it (kube >= 1.36).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from wasmsched.api.types import Pod
from wasmsched.config.args import NodeResourcesBalancedAllocationArgs
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import (
    MAX_NODE_SCORE,
    BatchScores,
    Handle,
    NodeBatch,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.helper.gomath import div_trunc
from wasmsched.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


class _PreScoreState:
    """The pod's request of each configured resource, in the order of the args' resources."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: list[int]) -> None:
        self.pod_requests = pod_requests

    def clone(self) -> _PreScoreState:
        # Never mutated after PreScore, so sharing is safe (kube does the same).
        return self


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """int64((1 - std) * MaxNodeScore) over the fractions of the resources the node allocates.

    Float operations are done in kube's order so results match bit for bit.
    """
    if len(allocatable) == 2 and allocatable[0] != 0 and allocatable[1] != 0:
        # The default (cpu, memory) case without building lists.
        f0 = float(requested[0]) / float(allocatable[0])
        f1 = float(requested[1]) / float(allocatable[1])
        if f0 > 1:
            f0 = 1.0
        if f1 > 1:
            f1 = 1.0
        return int((1 - abs((f0 - f1) / 2)) * float(MAX_NODE_SCORE))
    fractions: list[float] = []
    total = 0.0
    for i, a in enumerate(allocatable):
        if a == 0:
            continue
        fraction = float(requested[i]) / float(a)
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    n = len(fractions)
    # With two resources the std is half their difference; with one or none it is zero.
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        mean = total / float(n)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(n))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_resource_scorer(requested: Sequence[int], allocated: Sequence[int],
                             allocatable: Sequence[int]) -> int:
    """Maps the balance change the pod brings into [MaxNodeScore/2, MaxNodeScore].

    Both balances are in [50, 100], so their difference is in [-50, 50]; no change scores 75,
    perfectly balanced -> imbalanced 50, imbalanced -> balanced 100.
    """
    score_with_pod = balanced_resource_score(requested, allocatable)
    score_without_pod = balanced_resource_score(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    diff = half + score_with_pod - score_without_pod
    # diff is never negative (both balances are >= 50); Go's truncation then equals floor division.
    return half + (diff // 2 if diff >= 0 else div_trunc(diff, 2))


def balanced_cpu_mem_columns(a_cpu: NDArray[np.int64], a_mem: NDArray[np.int64], u_cpu: NDArray[np.int64],
                             u_mem: NDArray[np.int64], pod_cpu: int, pod_mem: int) -> NDArray[np.int64]:
    """balanced_resource_scorer over (cpu, memory) columns: balanced_resource_score's float64 operations in the
    same order, element-wise."""
    import numpy as np

    both = (a_cpu != 0) & (a_mem != 0)
    fa_cpu = np.where(both, a_cpu, 1).astype(np.float64)
    fa_mem = np.where(both, a_mem, 1).astype(np.float64)

    def balance(r_cpu: NDArray[np.int64], r_mem: NDArray[np.int64]) -> NDArray[np.int64]:
        f0 = np.minimum(r_cpu.astype(np.float64) / fa_cpu, 1.0)
        f1 = np.minimum(r_mem.astype(np.float64) / fa_mem, 1.0)
        score = ((1 - np.abs((f0 - f1) / 2)) * float(MAX_NODE_SCORE)).astype(np.int64)
        # With fewer than two resources allocated the std is 0: balance MaxNodeScore.
        return np.where(both, score, MAX_NODE_SCORE)

    half = MAX_NODE_SCORE // 2
    # Both balances are in [50, 100]: diff is never negative and floor division is Go's truncation.
    diff = half + balance(u_cpu + pod_cpu, u_mem + pod_mem) - balance(u_cpu, u_mem)
    return half + diff // 2


class BalancedAllocation(PreScorePlugin, ScorePlugin):
    name = NAME

    def __init__(self, args: NodeResourcesBalancedAllocationArgs, handle: Handle | None = None) -> None:
        self.handle = handle
        self.args = args
        self.scorer = ResourceAllocationScorer(NAME, balanced_resource_scorer, args.resources,
                                               use_requested=True,
                                               cpu_mem_columns_fn=balanced_cpu_mem_columns)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        pod_requests = self.scorer.pod_resource_request_list(state, pod)
        if self.scorer.is_best_effort_pod(pod_requests):
            # Best-effort pods would otherwise all be steered to the same node (kubernetes#129138).
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(pod_requests))
        return None

    def _pod_requests(self, state: CycleState, pod: Pod) -> list[int] | None:
        """The PreScore state, or (PreScore not run) the requests computed now; None: best effort."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            return s.pod_requests
        pod_requests = self.scorer.calculate_pod_resource_request_list(pod)
        if self.scorer.is_best_effort_pod(pod_requests):
            return None
        return pod_requests

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        pod_requests = self._pod_requests(state, pod)
        if pod_requests is None:
            return 0, None
        return self.scorer.score(node_info, pod_requests)

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        pod_requests = self._pod_requests(state, pod)
        if pod_requests is None:
            return [0] * len(batch), None
        return self.scorer.score_batch(batch, pod_requests)

    def score_extensions(self) -> ScoreExtensions | None:
        return None
