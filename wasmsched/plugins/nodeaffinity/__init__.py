"""NodeAffinity: pod nodeSelector / node affinity (required filter, preferred score) plus addedAffinity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wasmsched.config.args import NodeAffinityArgs, get_args
from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.nodeaffinity.node_affinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NAME,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    NodeAffinity,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "NodeAffinity",
    "new",
]


def new(args: NodeAffinityArgs | Mapping[str, Any] | None, handle: Handle | None) -> Plugin:
    """New: the args as `get_args` takes them (None: the v1 defaults), validated."""
    return NodeAffinity(get_args(NodeAffinityArgs, args), handle)
