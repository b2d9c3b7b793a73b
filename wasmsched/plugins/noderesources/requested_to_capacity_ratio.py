"""RequestedToCapacityRatio scoring strategy (noderesources/requested_to_capacity_ratio.go)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from wasmsched.config.types import MAX_CUSTOM_PRIORITY_SCORE
from wasmsched.framework.interface import MAX_NODE_SCORE
from wasmsched.plugins.helper.gomath import div_trunc
from wasmsched.plugins.helper.shape_score import (
    FunctionShape,
    FunctionShapePoint,
    build_broken_linear_function,
)
from wasmsched.plugins.noderesources.resource_allocation import ResourceSpecLike, ScorerFn

MAX_UTILIZATION = 100


class UtilizationShapePointLike(Protocol):
    @property
    def utilization(self) -> int: ...

    @property
    def score(self) -> int: ...


def go_round_ratio(num: int, den: int) -> int:
    """int64(math.Round(float64(num) / float64(den))) for den > 0: halves round away from zero."""
    q = div_trunc(2 * abs(num) + den, 2 * den)
    return q if num >= 0 else -q


def build_requested_to_capacity_ratio_scorer_function(
    scoring_function_shape: FunctionShape, resources: Sequence[ResourceSpecLike]
) -> ScorerFn:
    raw_scoring_function = build_broken_linear_function(scoring_function_shape)
    weights = [r.weight for r in resources]
    at_max = raw_scoring_function(MAX_UTILIZATION)

    def resource_scoring_function(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return at_max
        return raw_scoring_function(div_trunc(requested * MAX_UTILIZATION, capacity))

    def scorer(requested: Sequence[int], _allocated: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            weight = weights[i]
            resource_score = resource_scoring_function(requested[i], capacity)
            # Resources scoring 0 do not count in the weight sum either (kube's behaviour).
            if resource_score > 0:
                node_score += resource_score * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return go_round_ratio(node_score, weight_sum)

    return scorer


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpecLike], shape: Sequence[UtilizationShapePointLike]
) -> ScorerFn:
    # Shape scores are 0..MaxCustomPriorityScore; scale them to the scheduler's 0..MaxNodeScore.
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    shapes = [FunctionShapePoint(p.utilization, p.score * factor) for p in shape]
    return build_requested_to_capacity_ratio_scorer_function(shapes, resources)
