"""The API server's defaulting (SetDefaults_*) for the fields of workload controllers and storage
objects that their validation and the scheduler read; applied by the manifest loader before validation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def default_replication_controller(rc: Any) -> None:
    """core/v1 SetDefaults_ReplicationController, plus the declarative `replicas` default of 1."""
    if rc.spec.HasField("template"):
        labels = rc.spec.template.metadata.labels
        # kube tests `labels != nil`; a decoded empty map is nil, as here
        if labels:
            if not rc.spec.selector:
                rc.spec.selector.update(labels)
            if not rc.metadata.labels:
                rc.metadata.labels.update(labels)
    if not rc.spec.HasField("replicas"):
        rc.spec.replicas = 1


def default_replicas(obj: Any) -> None:
    """apps/v1 SetDefaults_ReplicaSet / SetDefaults_StatefulSet: `replicas` is 1 when absent."""
    if not obj.spec.HasField("replicas"):
        obj.spec.replicas = 1


def default_storage_class(sc: Any) -> None:
    """storage/v1 SetDefaults_StorageClass: VolumeZone and VolumeBinding read the binding mode."""
    if not sc.HasField("reclaimPolicy"):
        sc.reclaimPolicy = "Delete"
    if not sc.HasField("volumeBindingMode"):
        sc.volumeBindingMode = "Immediate"


def default_csi_driver(d: Any) -> None:
    """storage/v1 SetDefaults_CSIDriver (the fields with a scalar default; VolumeLimitScaling is on)."""
    spec = d.spec
    if not spec.HasField("attachRequired"):
        spec.attachRequired = True
    for name in ("podInfoOnMount", "storageCapacity", "requiresRepublish", "preventPodSchedulingIfMissing"):
        if not spec.HasField(name):
            setattr(spec, name, False)
    if not spec.HasField("fsGroupPolicy"):
        spec.fsGroupPolicy = "ReadWriteOnceWithFSType"
    if not spec.volumeLifecycleModes:
        spec.volumeLifecycleModes.append("Persistent")


def default_persistent_volume(pv: Any) -> None:
    """core/v1 SetDefaults_PersistentVolume."""
    if not pv.status.phase:
        pv.status.phase = "Pending"
    if not pv.spec.persistentVolumeReclaimPolicy:
        pv.spec.persistentVolumeReclaimPolicy = "Retain"
    if not pv.spec.HasField("volumeMode"):
        pv.spec.volumeMode = "Filesystem"


def default_persistent_volume_claim(pvc: Any) -> None:
    """core/v1 SetDefaults_PersistentVolumeClaim and SetDefaults_PersistentVolumeClaimSpec."""
    if not pvc.status.phase:
        pvc.status.phase = "Pending"
    if not pvc.spec.HasField("volumeMode"):
        pvc.spec.volumeMode = "Filesystem"


# kind -> defaulting function, for the kinds that have defaults wasmsched relies on.
DEFAULTERS: dict[str, Callable[[Any], None]] = {
    "ReplicationController": default_replication_controller,
    "ReplicaSet": default_replicas,
    "StatefulSet": default_replicas,
    "StorageClass": default_storage_class,
    "CSIDriver": default_csi_driver,
    "PersistentVolume": default_persistent_volume,
    "PersistentVolumeClaim": default_persistent_volume_claim,
}
