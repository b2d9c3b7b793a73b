"""NodeName: a pod with spec.nodeName fits only that node."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.nodename.node_name import ERR_REASON, NAME, NodeName, fits

__all__ = ["ERR_REASON", "NAME", "NodeName", "fits", "new"]


def new(args: Any, handle: Handle) -> Plugin:
    return NodeName()
