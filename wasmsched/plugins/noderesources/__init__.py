"""NodeResourcesFit and NodeResourcesBalancedAllocation (kube-scheduler's noderesources package)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wasmsched.config.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, get_args
from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.noderesources.balanced_allocation import NAME as BALANCED_ALLOCATION_NAME
from wasmsched.plugins.noderesources.balanced_allocation import BalancedAllocation
from wasmsched.plugins.noderesources.fit import NAME as FIT_NAME
from wasmsched.plugins.noderesources.fit import Fit, InsufficientResource, fits

__all__ = [
    "BALANCED_ALLOCATION_NAME",
    "FIT_NAME",
    "BalancedAllocation",
    "Fit",
    "InsufficientResource",
    "fits",
    "new_balanced_allocation",
    "new_fit",
]


def new_fit(args: NodeResourcesFitArgs | Mapping[str, Any] | None, handle: Handle) -> Plugin:
    """NewFit: the args as `get_args` takes them (None: the v1 defaults), validated."""
    return Fit(get_args(NodeResourcesFitArgs, args), handle)


def new_balanced_allocation(args: NodeResourcesBalancedAllocationArgs | Mapping[str, Any] | None,
                            handle: Handle) -> Plugin:
    """NewBalancedAllocation: the args as `get_args` takes them (None: the v1 defaults), validated."""
    return BalancedAllocation(get_args(NodeResourcesBalancedAllocationArgs, args), handle)
