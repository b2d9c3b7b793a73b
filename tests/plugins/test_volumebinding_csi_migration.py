"""VolumeBinding checks a bound in-tree PV as its CSI translation when the node's CSINode lists the plugin
as migrated (binder.go tryTranslatePVToCSI; csi-translation-lib translateTopologyFromInTreeToCSI): the
PV's zone becomes the driver's topology key, which a node with only topology.kubernetes.io/zone lacks.
Found by the differential fuzzer (tests/differential/scenarios/volumebinding-migrated-pv-zone-topology.yaml)."""

from __future__ import annotations

import pytest

from wasmsched.api.types import CSINode, PersistentVolume
from wasmsched.plugins.volumebinding.assume_cache import VolumeBindingError
from wasmsched.plugins.volumebinding.csi_migration import try_translate_pv_to_csi


def _pv(source: str, zone: str = "", beta: bool = False, affinity_zone: str = "") -> PersistentVolume:
    pv = PersistentVolume()
    pv.metadata.name = "pv-1"
    if zone:
        pv.metadata.labels["failure-domain.beta.kubernetes.io/zone" if beta else "topology.kubernetes.io/zone"] = zone
    if source == "ebs":
        pv.spec.persistentVolumeSource.awsElasticBlockStore.volumeID = "vol-1"
    elif source == "gce":
        pv.spec.persistentVolumeSource.gcePersistentDisk.pdName = "disk-1"
    else:
        pv.spec.persistentVolumeSource.csi.driver = "ebs.csi.aws.com"
        pv.spec.persistentVolumeSource.csi.volumeHandle = "h"
    if affinity_zone:
        r = pv.spec.nodeAffinity.required.nodeSelectorTerms.add().matchExpressions.add()
        r.key, r.operator = "topology.kubernetes.io/zone", "In"
        r.values.append(affinity_zone)
    return pv


def _csinode(migrated: str | None) -> CSINode:
    n = CSINode()
    n.metadata.name = "node-1"
    if migrated is not None:
        n.metadata.annotations["storage.alpha.kubernetes.io/migrated-plugins"] = migrated
    return n


def _affinity(pv: PersistentVolume) -> list[list[tuple[str, list[str]]]]:
    terms = pv.spec.nodeAffinity.required.nodeSelectorTerms
    return [[(r.key, list(r.values)) for r in t.matchExpressions] for t in terms]


@pytest.mark.parametrize(
    ("name", "pv", "csinode", "want"),
    [
        ("ebs zones from labels", _pv("ebs", "zone-b__zone-a"), _csinode("kubernetes.io/aws-ebs"),
         [[("topology.ebs.csi.aws.com/zone", ["zone-a", "zone-b"])]]),
        ("gce beta label", _pv("gce", "us-east1-b", beta=True), _csinode("kubernetes.io/gce-pd,kubernetes.io/aws-ebs"),
         [[("topology.gke.io/zone", ["us-east1-b"])]]),
        ("zone in node affinity is renamed", _pv("ebs", "zone-c", affinity_zone="zone-a"),
         _csinode("kubernetes.io/aws-ebs"), [[("topology.ebs.csi.aws.com/zone", ["zone-a"])]]),
        ("not migrated on the node", _pv("ebs", "zone-a"), _csinode("kubernetes.io/gce-pd"), []),
        ("no CSINode", _pv("ebs", "zone-a"), None, []),
        ("no annotation", _pv("ebs", "zone-a"), _csinode(None), []),
        ("a CSI PV is not translated", _pv("csi", "zone-a"), _csinode("kubernetes.io/aws-ebs"), []),
    ],
)
def test_try_translate_pv_to_csi(name: str, pv: PersistentVolume, csinode: CSINode | None,
                                 want: list[list[tuple[str, list[str]]]]) -> None:
    before = PersistentVolume()
    before.CopyFrom(pv)
    got = try_translate_pv_to_csi(pv, csinode)
    if not want:
        assert got == before
    else:
        assert _affinity(got) == want
    assert pv == before  # the cached PV is left as it is


def test_translation_errors_are_kubes() -> None:
    # a regional GCE PD whose zones are not {locale}-{region}-{zone}
    with pytest.raises(VolumeBindingError, match=r"^could not translate pv: failed to get region from zones: "
                       r"zone in unexpected format"):
        try_translate_pv_to_csi(_pv("gce", "zone-a__zone-b"), _csinode("kubernetes.io/gce-pd"))
