"""PodTopologySpread: spreads pods across topology domains (kube-scheduler's podtopologyspread)."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.podtopologyspread.plugin import NAME, PodTopologySpread

__all__ = ["NAME", "PodTopologySpread", "new"]


def new(args: Any, handle: Handle) -> Plugin:
    return PodTopologySpread(args, handle)
