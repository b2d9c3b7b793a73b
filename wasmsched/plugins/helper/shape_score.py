"""FunctionShape and BuildBrokenLinearFunction (helper/shape_score.go), used by RequestedToCapacityRatio."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wasmsched.plugins.helper.gomath import div_trunc


@dataclass(frozen=True, slots=True)
class FunctionShapePoint:
    # utilization is the function argument, score its value at that point.
    utilization: int
    score: int


FunctionShape = Sequence[FunctionShapePoint]


def build_broken_linear_function(shape: FunctionShape) -> Callable[[int], int]:
    """A function made of linear segments between the shape's points.

    f(p) = shape[0].score for p < shape[0].utilization, shape[i].score at shape[i].utilization,
    shape[-1].score for p > shape[-1].utilization, and linear (Go integer arithmetic) in between.
    """
    points = tuple((pt.utilization, pt.score) for pt in shape)

    def f(p: int) -> int:
        for i, (util, score) in enumerate(points):
            if p <= util:
                if i == 0:
                    return points[0][1]
                prev_util, prev_score = points[i - 1]
                return prev_score + div_trunc((score - prev_score) * (p - prev_util), util - prev_util)
        return points[-1][1]

    return f
