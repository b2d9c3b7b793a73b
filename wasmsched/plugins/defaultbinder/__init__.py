"""DefaultBinder: binds pods to nodes through the cluster client."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.defaultbinder.default_binder import NAME, DefaultBinder

__all__ = ["NAME", "DefaultBinder", "new"]


def new(args: Any, handle: Handle) -> Plugin:
    return DefaultBinder(handle)
