"""NodeResourcesFit and NodeResourcesBalancedAllocation (kube-scheduler's noderesources package)."""

from __future__ import annotations

from typing import Any, TypeVar

from wasmsched.config.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, PluginArgs
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


A = TypeVar("A", bound=PluginArgs)


def _validated_args(cls: type[A], args: Any) -> A:
    """None: the v1 defaults; a dict: decoded as YAML args; raises ConfigError when invalid."""
    decoded = cls.default() if args is None else args
    if isinstance(decoded, dict):
        decoded = cls.from_dict(decoded)
    if not isinstance(decoded, cls):
        raise TypeError(f"want args to be of type {cls.__name__}, got {type(args).__name__}")
    errs = decoded.validate()
    if errs:
        raise ConfigError(errs)
    return decoded


def new_fit(args: Any, handle: Handle) -> Plugin:
    """NewFit: validates the args (None: the v1 defaults; a dict: decoded as YAML args) and builds the plugin."""
    return Fit(_validated_args(NodeResourcesFitArgs, args), handle)


def new_balanced_allocation(args: Any, handle: Handle) -> Plugin:
    """NewBalancedAllocation: validates the args (None: the v1 defaults; a dict: decoded) and builds it."""
    return BalancedAllocation(_validated_args(NodeResourcesBalancedAllocationArgs, args), handle)
