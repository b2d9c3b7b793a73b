"""NodePorts: a node must have the pod's requested host ports free."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.nodeports.node_ports import (
    ERR_REASON,
    NAME,
    PRE_FILTER_STATE_KEY,
    NodePorts,
    fits,
    get_host_ports,
)

__all__ = ["ERR_REASON", "NAME", "PRE_FILTER_STATE_KEY", "NodePorts", "fits", "get_host_ports", "new"]


def new(args: Any, handle: Handle) -> Plugin:
    return NodePorts()
