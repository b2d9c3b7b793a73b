"""NodeAffinity: pod nodeSelector / node affinity (required filter, preferred score) plus addedAffinity."""

from __future__ import annotations

from typing import Any

from wasmsched.config.args import NodeAffinityArgs
from wasmsched.config.errors import ConfigError
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


def new(args: Any, handle: Handle | None) -> Plugin:
    if args is None:
        args = NodeAffinityArgs()
    if not isinstance(args, NodeAffinityArgs):
        raise TypeError(f"args are not of type NodeAffinityArgs, got {type(args).__name__}")
    errors = args.validate()
    if errors:
        raise ConfigError(errors)
    return NodeAffinity(args, handle)
