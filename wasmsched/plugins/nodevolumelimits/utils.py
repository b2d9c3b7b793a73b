"""isCSIMigrationOn (nodevolumelimits/utils.go)."""

from __future__ import annotations

from wasmsched.api.types import CSINode
from wasmsched.plugins.nodevolumelimits.csitranslation import (
    AWS_EBS_IN_TREE_PLUGIN_NAME,
    AZURE_DISK_IN_TREE_PLUGIN_NAME,
    CINDER_IN_TREE_PLUGIN_NAME,
    GCE_PD_IN_TREE_PLUGIN_NAME,
    PORTWORX_VOLUME_PLUGIN_NAME,
)

# The in-tree plugins whose CSI migration is on in 1.37 (all GA, their gates removed). Azure File and
# vSphere are migratable for csi-translation-lib but absent here, so their volumes are never counted.
_MIGRATED_PLUGINS = frozenset((
    AWS_EBS_IN_TREE_PLUGIN_NAME,
    PORTWORX_VOLUME_PLUGIN_NAME,
    GCE_PD_IN_TREE_PLUGIN_NAME,
    AZURE_DISK_IN_TREE_PLUGIN_NAME,
    CINDER_IN_TREE_PLUGIN_NAME,
))


def is_csi_migration_on(csi_node: CSINode | None, plugin_name: str) -> bool:
    """Whether the plugin's volumes count as their CSI driver's; never without a CSINode."""
    if csi_node is None or not plugin_name:
        return False
    return plugin_name in _MIGRATED_PLUGINS
