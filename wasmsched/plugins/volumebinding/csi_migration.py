"""tryTranslatePVToCSI of kube 1.37 volumebinding/binder.go: an in-tree PV whose plugin the node's CSINode
says is migrated is checked as csi-translation-lib's TranslateInTreePVToCSI translates it. The binder reads
only the translated PV's node affinity, so that is what is translated here (translateTopologyFromInTreeToCSI
of csi-translation-lib plugins/in_tree_volume.go); the volume handle is computed for its errors."""

from __future__ import annotations

from wasmsched.api.types import CSINode, NodeSelectorRequirement, NodeSelectorTerm, PersistentVolume
from wasmsched.plugins.nodevolumelimits.csitranslation import (
    AWS_EBS_IN_TREE_PLUGIN_NAME,
    AZURE_DISK_IN_TREE_PLUGIN_NAME,
    CINDER_IN_TREE_PLUGIN_NAME,
    GCE_PD_IN_TREE_PLUGIN_NAME,
    PORTWORX_VOLUME_PLUGIN_NAME,
    CSITranslator,
    TranslationError,
)
from wasmsched.plugins.volumebinding.assume_cache import VolumeBindingError

MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
# isCSIMigrationOnForPlugin
_MIGRATION_ON = frozenset({AWS_EBS_IN_TREE_PLUGIN_NAME, GCE_PD_IN_TREE_PLUGIN_NAME, AZURE_DISK_IN_TREE_PLUGIN_NAME,
                           CINDER_IN_TREE_PLUGIN_NAME, PORTWORX_VOLUME_PLUGIN_NAME})
# The translators that call translateTopologyFromInTreeToCSI, with their CSI topology key.
_TOPOLOGY_KEY = {
    AWS_EBS_IN_TREE_PLUGIN_NAME: "topology.ebs.csi.aws.com/zone",
    GCE_PD_IN_TREE_PLUGIN_NAME: "topology.gke.io/zone",
    CINDER_IN_TREE_PLUGIN_NAME: "topology.cinder.csi.openstack.org/zone",
}
ZONE_GA, REGION_GA = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
ZONE_BETA, REGION_BETA = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
_translator = CSITranslator()


def _migrated_on_node(plugin: str, csi_node: CSINode | None) -> bool:
    """isPluginMigratedToCSIOnNode."""
    if csi_node is None:
        return False
    value = csi_node.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return bool(value) and plugin in value.split(",")


def try_translate_pv_to_csi(pv: PersistentVolume, csi_node: CSINode | None) -> PersistentVolume:
    if not _translator.is_pv_migratable(pv):
        return pv
    try:
        plugin = _translator.get_in_tree_plugin_name_from_spec(pv, None)
    except TranslationError as e:
        raise VolumeBindingError(f"could not get plugin name from pv: {e}") from None
    if plugin not in _MIGRATION_ON or not _migrated_on_node(plugin, csi_node):
        return pv
    try:
        _translator.translate_in_tree_pv_to_csi(pv)
    except TranslationError as e:
        raise VolumeBindingError(f"could not translate pv: {e}") from None
    key = _TOPOLOGY_KEY.get(plugin)
    if key is None:
        return pv
    out = PersistentVolume()
    out.CopyFrom(pv)
    _translate_topology(out, key)
    return out


def _terms(pv: PersistentVolume) -> list[NodeSelectorTerm]:
    return list(pv.spec.nodeAffinity.required.nodeSelectorTerms)


def _key_in_affinity(pv: PersistentVolume, key: str) -> bool:
    return any(r.key == key for t in _terms(pv) for r in t.matchExpressions)


def _topology_label(pv: PersistentVolume) -> tuple[str, str]:
    """getTopologyLabel: GA or beta, by node affinity first, then labels; GA when neither says."""
    if _key_in_affinity(pv, ZONE_GA):
        return ZONE_GA, REGION_GA
    if _key_in_affinity(pv, ZONE_BETA):
        return ZONE_BETA, REGION_BETA
    if ZONE_GA in pv.metadata.labels:
        return ZONE_GA, REGION_GA
    if ZONE_BETA in pv.metadata.labels:
        return ZONE_BETA, REGION_BETA
    return ZONE_GA, REGION_GA


def _values(pv: PersistentVolume, key: str) -> list[str]:
    return sorted({v for t in _terms(pv) for r in t.matchExpressions if r.key == key for v in r.values})


def _replace(pv: PersistentVolume, old: str, new: str) -> None:
    for t in pv.spec.nodeAffinity.required.nodeSelectorTerms:
        for r in t.matchExpressions:
            if r.key == old:
                r.key = new


def _add(pv: PersistentVolume, key: str, zones: list[str]) -> None:
    """addTopology: the zones (trimmed, non-empty, sorted, unique) as an In requirement of every term."""
    clean = sorted({z.strip() for z in zones if z.strip()})
    if not clean:
        return  # kube returns an error here that its caller ignores
    required = pv.spec.nodeAffinity.required
    if not required.nodeSelectorTerms:
        required.nodeSelectorTerms.add()
    for t in required.nodeSelectorTerms:
        t.matchExpressions.append(NodeSelectorRequirement(key=key, operator="In", values=clean))


def _translate_topology(pv: PersistentVolume, csi_key: str) -> None:
    """translateTopologyFromInTreeToCSI."""
    zone_label, region_label = _topology_label(pv)
    if _values(pv, zone_label):
        _replace(pv, zone_label, csi_key)
    elif zone_label in pv.metadata.labels:
        _add(pv, csi_key, pv.metadata.labels[zone_label].split("__"))
    if region_label == REGION_BETA and _values(pv, region_label):
        _replace(pv, region_label, REGION_GA)
