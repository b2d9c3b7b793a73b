"""Helpers shared by in-tree plugins (kube-scheduler's framework/plugins/helper)."""

from wasmsched.plugins.helper.normalize_score import default_normalize_score
from wasmsched.plugins.helper.shape_score import (
    FunctionShape,
    FunctionShapePoint,
    build_broken_linear_function,
)
from wasmsched.plugins.helper.spread import default_selector
from wasmsched.plugins.helper.taint import do_not_schedule_taints_filter_func

__all__ = [
    "FunctionShape",
    "FunctionShapePoint",
    "build_broken_linear_function",
    "default_normalize_score",
    "default_selector",
    "do_not_schedule_taints_filter_func",
]
