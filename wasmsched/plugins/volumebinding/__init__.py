"""VolumeBinding: binds a pod's PersistentVolumeClaims to PVs, or has them provisioned, on the node
chosen for the pod (WaitForFirstConsumer), and checks bound PVs' node affinity."""

from __future__ import annotations

from wasmsched.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    VolumeBinder,
)
from wasmsched.plugins.volumebinding.volume_binding import NAME, STATE_KEY, StateData, VolumeBinding, new

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "NAME",
    "STATE_KEY",
    "StateData",
    "VolumeBinder",
    "VolumeBinding",
    "new",
]
