"""InterPodAffinity: required and preferred pod (anti-)affinity (kube-scheduler's interpodaffinity)."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.interpodaffinity.plugin import NAME, InterPodAffinity

__all__ = ["NAME", "InterPodAffinity", "new"]


def new(args: Any, handle: Handle) -> Plugin:
    return InterPodAffinity(args, handle)
