"""VolumeRestrictions: inline disk conflicts and ReadWriteOncePod claims already in use."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.volumerestrictions.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    NAME,
    PRE_FILTER_STATE_KEY,
    VolumeRestrictions,
    is_volume_conflict,
    satisfy_volume_conflicts,
)

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "VolumeRestrictions",
    "is_volume_conflict",
    "new",
    "satisfy_volume_conflicts",
]


def new(args: Any, handle: Handle) -> Plugin:
    return VolumeRestrictions(handle)
