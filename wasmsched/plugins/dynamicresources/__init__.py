"""DynamicResources: pods' ResourceClaims allocated with structured parameters (DRA, resource.k8s.io/v1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wasmsched.config.args import DynamicResourcesArgs, get_args
from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.dynamicresources.plugin import NAME, STATE_KEY, DynamicResources, compute_score

__all__ = ["NAME", "STATE_KEY", "DynamicResources", "compute_score", "new"]


def new(args: DynamicResourcesArgs | Mapping[str, Any] | None, handle: Handle) -> Plugin:
    a = get_args(DynamicResourcesArgs, args)
    pl = DynamicResources(handle, filter_timeout=a.filter_timeout, binding_timeout=a.binding_timeout)
    pl.args = a
    return pl
