"""VolumeRestrictions (volumerestrictions/volume_restrictions.go): PreFilter with AddPod/RemovePod,
Filter and EventsToRegister.

Filter rejects a node where an inline GCE PD, AWS EBS, RBD or iSCSI volume of the pod conflicts with
one of a pod already there, and any node when a ReadWriteOncePod claim of the pod is in use by
another pod (PreFilter counts those references across the snapshot; preemption and nominated pods
adjust the count through AddPod/RemovePod).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wasmsched.api.types import PersistentVolumeClaim, Pod
from wasmsched.framework.cycle_state import CycleState, NotFoundError
from wasmsched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from wasmsched.framework.interface import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
)
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.plugins.helper.objects import as_pair, as_update

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

# ErrReasonDiskConflict: the NoDiskConflict predicate's reason.
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
# ErrReasonReadWriteOncePodConflict: a ReadWriteOncePod claim of the pod is used by another pod.
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by "
    "another pod"
)

READ_WRITE_ONCE_POD = "ReadWriteOncePod"


def pvc_not_found_message(name: str) -> str:
    """The NotFound error of the informer's PVC lister (resource "persistentvolumeclaim")."""
    return f'persistentvolumeclaim "{name}" not found'


@dataclass(slots=True)
class _PreFilterState:
    # Claim names of the pod's volumes whose claims have the ReadWriteOncePod access mode.
    read_write_once_pod_pvcs: frozenset[str]
    # References to those claims by pods already scheduled (at most one each, unless nominated or
    # preemption-simulated pods are added).
    conflicting_pvc_ref_count: int

    def clone(self) -> _PreFilterState:
        # The claim set never changes after PreFilter: shared, as kube shares it.
        return _PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)

    def conflicting_pvc_ref_count_for_pod(self, pod: Pod) -> int:
        # As kube: claim names only, the namespace of the pod is not compared.
        return sum(
            1 for v in pod.spec.volumes
            if v.volumeSource.HasField("persistentVolumeClaim")
            and v.volumeSource.persistentVolumeClaim.claimName in self.read_write_once_pod_pvcs
        )

    def update_with_pod(self, pod_info: PodInfo, multiplier: int) -> None:
        self.conflicting_pvc_ref_count += multiplier * self.conflicting_pvc_ref_count_for_pod(pod_info.pod)


def _have_overlap(a1: Sequence[str], a2: Sequence[str]) -> bool:
    return not set(a1).isdisjoint(a2)


def is_volume_conflict(volume: Any, pod: Pod) -> bool:
    """Whether the inline volume `volume` (a Volume) conflicts with one of `pod`'s volumes."""
    src = volume.volumeSource
    for existing_volume in pod.spec.volumes:
        esrc = existing_volume.volumeSource
        # The same GCE disk mounted by several pods conflicts unless all mount it read-only.
        if src.HasField("gcePersistentDisk") and esrc.HasField("gcePersistentDisk"):
            disk, existing_disk = src.gcePersistentDisk, esrc.gcePersistentDisk
            if disk.pdName == existing_disk.pdName and not (disk.readOnly and existing_disk.readOnly):
                return True
        if (src.HasField("awsElasticBlockStore") and esrc.HasField("awsElasticBlockStore")
                and src.awsElasticBlockStore.volumeID == esrc.awsElasticBlockStore.volumeID):
            return True
        # iSCSI volumes are RWO or ROX: one IQN allows a single read-write mount.
        if (src.HasField("iscsi") and esrc.HasField("iscsi") and src.iscsi.iqn == esrc.iscsi.iqn
                and not (src.iscsi.readOnly and esrc.iscsi.readOnly)):
            return True
        if src.HasField("rbd") and esrc.HasField("rbd"):
            rbd, erbd = src.rbd, esrc.rbd
            # The same image: a common Ceph monitor, the same RADOS pool and image name; only one
            # read-write mount is permitted.
            if (_have_overlap(rbd.monitors, erbd.monitors) and rbd.pool == erbd.pool and rbd.image == erbd.image
                    and not (rbd.readOnly and erbd.readOnly)):
                return True
    return False


def needs_restrictions_check(volume: Any) -> bool:
    src = volume.volumeSource
    return (src.HasField("gcePersistentDisk") or src.HasField("awsElasticBlockStore") or src.HasField("rbd")
            or src.HasField("iscsi"))


def _satisfy_volume_conflicts(pod: Pod, pods: Sequence[Pod]) -> bool:
    """Whether none of the pod's restricted inline volumes conflicts with a volume of `pods`."""
    for v in pod.spec.volumes:
        if not needs_restrictions_check(v):
            continue
        if any(is_volume_conflict(v, ev) for ev in pods):
            return False
    return True


def satisfy_volume_conflicts(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether scheduling the pod onto the node causes no conflict with the volumes already there."""
    return _satisfy_volume_conflicts(pod, [pi.pod for pi in node_info.pods])


class VolumeRestrictions(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def _read_write_once_pod_pvcs_for_pod(self, pod: Pod) -> frozenset[str] | Status:
        client = self._handle.client()
        ns = pod.metadata.namespace
        pvcs: set[str] = set()
        for v in pod.spec.volumes:
            if not v.volumeSource.HasField("persistentVolumeClaim"):
                continue
            claim_name = v.volumeSource.persistentVolumeClaim.claimName
            pvc = client.get_object("PersistentVolumeClaim", f"{ns}/{claim_name}")
            if pvc is None:
                return Status.unresolvable(pvc_not_found_message(claim_name))
            if READ_WRITE_ONCE_POD in pvc.spec.accessModes:
                pvcs.add(pvc.metadata.name)
        return frozenset(pvcs)

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.spec.volumes:
            # Nothing to check and no claim to look up: kube's Skip, without the lookups.
            return None, Status.skip()
        needs_check = any(needs_restrictions_check(v) for v in pod.spec.volumes)
        pvcs = self._read_write_once_pod_pvcs_for_pod(pod)
        if isinstance(pvcs, Status):
            return None, pvcs
        conflicting = 0
        if pvcs:
            snapshot = self._handle.snapshot_shared_lister()
            ns = pod.metadata.namespace
            # At most one pod may use a ReadWriteOncePod claim: one reference per claim in use.
            conflicting = sum(1 for name in pvcs if snapshot.is_pvc_used_by_pods(f"{ns}/{name}"))
        if not needs_check and conflicting == 0:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(pvcs, conflicting))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    @staticmethod
    def _get_pre_filter_state(state: CycleState) -> _PreFilterState | Status:
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except NotFoundError:
            # PreFilter did not run in this cycle.
            return Status.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        if not isinstance(s, _PreFilterState):
            return Status.error(f"{s!r} convert to volumerestrictions.state error")
        return s

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        s = self._get_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_info_to_add, 1)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        s = self._get_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_info_to_remove, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not satisfy_volume_conflicts(pod, node_info):
            return Status.unschedulable(ERR_REASON_DISK_CONFLICT)
        s = self._get_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        if s.conflicting_pvc_ref_count > 0:
            return Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Volumes of running pods are released when they are deleted. spec.volumes is immutable,
            # so pod updates are not registered.
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                self.is_schedulable_after_assigned_pod_deleted,
            ),
            # No hint: any new node may make the pod schedulable.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            # PreFilter needs the claim to exist to check its access modes.
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                self.is_schedulable_after_persistent_volume_claim_added,
            ),
        ]

    def is_schedulable_after_persistent_volume_claim_added(self, pod: Pod, old_obj: Any,
                                                           new_obj: Any) -> QueueingHint:
        typed = as_update(PersistentVolumeClaim, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        pvc = typed[1]
        if pvc.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QUEUE_SKIP
        for v in pod.spec.volumes:
            if (v.volumeSource.HasField("persistentVolumeClaim")
                    and v.volumeSource.persistentVolumeClaim.claimName == pvc.metadata.name):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_assigned_pod_deleted(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_pair(Pod, old_obj, new_obj)
        if typed is None or typed[0] is None:
            return QueueingHint.QUEUE
        deleted = typed[0]
        if deleted.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QUEUE_SKIP
        if not _satisfy_volume_conflicts(pod, [deleted]):
            return QueueingHint.QUEUE
        # The deleted pod used one of the pod's claims, maybe a ReadWriteOncePod one. As kube, the
        # claim is not fetched to check its access mode: that would make the hint expensive.
        claims = {
            v.volumeSource.persistentVolumeClaim.claimName for v in pod.spec.volumes
            if v.volumeSource.HasField("persistentVolumeClaim")
        }
        for v in deleted.spec.volumes:
            if (v.volumeSource.HasField("persistentVolumeClaim")
                    and v.volumeSource.persistentVolumeClaim.claimName in claims):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
