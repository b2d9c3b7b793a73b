"""NodeResourcesFit and NodeResourcesBalancedAllocation (kube-scheduler's noderesources package)."""

from __future__ import annotations

from typing import Any

from wasmsched.config.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs
from wasmsched.config.errors import ConfigError
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


def new_fit(args: Any, handle: Handle) -> Plugin:
    """NewFit: validates the args (None: the v1 defaults; a dict: decoded as YAML args) and builds the plugin."""
    fit_args = NodeResourcesFitArgs.default() if args is None else args
    if isinstance(fit_args, dict):
        fit_args = NodeResourcesFitArgs.from_dict(fit_args)
    if not isinstance(fit_args, NodeResourcesFitArgs):
        raise TypeError(f"want args to be of type NodeResourcesFitArgs, got {type(args).__name__}")
    errs = fit_args.validate()
    if errs:
        raise ConfigError(errs)
    return Fit(fit_args, handle)


def new_balanced_allocation(args: Any, handle: Handle) -> Plugin:
    """NewBalancedAllocation: validates the args (None: the v1 defaults; a dict: decoded) and builds it."""
    ba_args = NodeResourcesBalancedAllocationArgs.default() if args is None else args
    if isinstance(ba_args, dict):
        ba_args = NodeResourcesBalancedAllocationArgs.from_dict(ba_args)
    if not isinstance(ba_args, NodeResourcesBalancedAllocationArgs):
        raise TypeError(f"want args to be of type NodeResourcesBalancedAllocationArgs, got {type(args).__name__}")
    errs = ba_args.validate()
    if errs:
        raise ConfigError(errs)
    return BalancedAllocation(ba_args, handle)
