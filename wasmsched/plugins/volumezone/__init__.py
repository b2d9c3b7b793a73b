"""VolumeZone: the zone and region labels of the pod's bound volumes must match the node's."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.volumezone.volume_zone import (
    ERR_REASON_CONFLICT,
    NAME,
    PRE_FILTER_STATE_KEY,
    TOPOLOGY_LABELS,
    PVTopology,
    VolumeZone,
    get_pv_topologies,
    label_zones_to_set,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "TOPOLOGY_LABELS",
    "PVTopology",
    "VolumeZone",
    "get_pv_topologies",
    "label_zones_to_set",
    "new",
]


def new(args: Any, handle: Handle) -> Plugin:
    return VolumeZone(handle)
