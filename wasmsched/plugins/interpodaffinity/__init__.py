"""InterPodAffinity: required and preferred pod (anti-)affinity (kube-scheduler's interpodaffinity)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wasmsched.config.args import InterPodAffinityArgs, get_args
from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.interpodaffinity.plugin import NAME, InterPodAffinity

__all__ = ["NAME", "InterPodAffinity", "new"]


def new(args: InterPodAffinityArgs | Mapping[str, Any] | None, handle: Handle) -> Plugin:
    """New: the args as `get_args` takes them (None: the v1 defaults), validated."""
    return InterPodAffinity(get_args(InterPodAffinityArgs, args), handle)
