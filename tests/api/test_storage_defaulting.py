"""The API server's defaults of the storage kinds (storage/v1 SetDefaults_StorageClass and
SetDefaults_CSIDriver, core/v1 SetDefaults_PersistentVolume(Claim)), as the manifest loader applies them."""

from __future__ import annotations

from typing import Any

from wasmsched.api.manifest import load_text

MANIFEST = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: plain}
provisioner: example.com/csi
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: delayed}
provisioner: example.com/csi
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: example.com/csi}
spec: {attachRequired: false}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], csi: {driver: example.com/csi, volumeHandle: h}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: claim}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeMode: Block}
status: {phase: Bound}
"""


def test_storage_kinds_get_the_api_servers_defaults() -> None:
    loaded = load_text(MANIFEST, "storage.yaml")

    def of_kind(kind: str) -> list[Any]:
        return list(loaded.of_kind(kind))

    plain, delayed = of_kind("StorageClass")
    assert (plain.volumeBindingMode, plain.reclaimPolicy) == ("Immediate", "Delete")
    assert (delayed.volumeBindingMode, delayed.reclaimPolicy) == ("WaitForFirstConsumer", "Retain")
    (driver,) = of_kind("CSIDriver")
    assert driver.spec.attachRequired is False  # given, kept
    assert driver.spec.HasField("storageCapacity") and driver.spec.storageCapacity is False
    assert driver.spec.preventPodSchedulingIfMissing is False
    assert list(driver.spec.volumeLifecycleModes) == ["Persistent"]
    (pv,) = of_kind("PersistentVolume")
    assert (pv.status.phase, pv.spec.persistentVolumeReclaimPolicy, pv.spec.volumeMode) == \
        ("Pending", "Retain", "Filesystem")
    (pvc,) = of_kind("PersistentVolumeClaim")
    assert (pvc.status.phase, pvc.spec.volumeMode) == ("Bound", "Block")
