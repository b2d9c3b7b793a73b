"""PodTopologySpread: spreads pods across topology domains (kube-scheduler's podtopologyspread)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wasmsched.config.args import PodTopologySpreadArgs, get_args
from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.podtopologyspread.plugin import NAME, PodTopologySpread

__all__ = ["NAME", "PodTopologySpread", "new"]


def new(args: PodTopologySpreadArgs | Mapping[str, Any] | None, handle: Handle) -> Plugin:
    """New: the args as `get_args` takes them (None: the v1 defaults), validated."""
    return PodTopologySpread(get_args(PodTopologySpreadArgs, args), handle)
