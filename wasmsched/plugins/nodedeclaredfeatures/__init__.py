"""NodeDeclaredFeatures: a node must declare (node.status.declaredFeatures) every feature the pod needs."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.nodedeclaredfeatures.node_declared_features import (
    COMPONENT_VERSION,
    DEFAULT_FRAMEWORK,
    ERR_REASON_UNSATISFIED_REQUIREMENTS,
    NAME,
    PRE_FILTER_STATE_KEY,
    NodeDeclaredFeatures,
    is_pod_resize_deferred,
    new_default,
    node_declared_features,
)

__all__ = [
    "COMPONENT_VERSION",
    "DEFAULT_FRAMEWORK",
    "ERR_REASON_UNSATISFIED_REQUIREMENTS",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "NodeDeclaredFeatures",
    "is_pod_resize_deferred",
    "new",
    "node_declared_features",
]


def new(args: Any, handle: Handle) -> Plugin:
    return new_default()
