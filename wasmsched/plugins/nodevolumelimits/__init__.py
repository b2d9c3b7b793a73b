"""NodeVolumeLimits: a node's CSINode caps the volumes of each CSI driver attached to it."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.nodevolumelimits.csi import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NAME, CSILimits
from wasmsched.plugins.nodevolumelimits.csitranslation import CSITranslator
from wasmsched.plugins.nodevolumelimits.utils import is_csi_migration_on

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NAME", "CSILimits", "CSITranslator", "is_csi_migration_on",
           "new"]


def new(args: Any, handle: Handle) -> Plugin:
    """NewCSI with kube 1.37's default feature gates (the plugin has no args)."""
    return CSILimits(handle)
