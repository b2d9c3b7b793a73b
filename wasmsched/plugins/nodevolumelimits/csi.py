"""NodeVolumeLimits (nodevolumelimits/csi.go and utils.go): per-node limits on attached CSI volumes.

A node's limit per CSI driver is its CSINode's drivers[].allocatable.count. Filter counts the unique
volumes ("<driver>/<volume handle>") of the pods on the node, of the node's VolumeAttachments and of
the new pod, per driver; in-tree volumes whose plugin was migrated to CSI count under the CSI driver.

Objects come from `handle.client()` as kube's listers serve them: CSINode, PersistentVolumeClaim,
PersistentVolume, StorageClass, CSIDriver and VolumeAttachment (kube indexes VolumeAttachments by
spec.nodeName; here they are listed and filtered).

Feature gates are kube 1.37's defaults: VolumeLimitScaling on (beta),
InPlacePodVerticalScalingSchedulerPreemption off (alpha); the constructor takes both.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.storage import get_persistent_volume_claim_class, volume_claim_name, volume_is_for_pod
from wasmsched.api.types import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    VolumeAttachment,
)
from wasmsched.framework.cycle_state import CycleState
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
    FilterVerdicts,
    Handle,
    NodeBatch,
    PreFilterPlugin,
    PreFilterResult,
    verdicts_of,
)
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.helper.objects import as_both, as_pair
from wasmsched.plugins.nodevolumelimits.csitranslation import CSITranslator, TranslationError
from wasmsched.plugins.nodevolumelimits.utils import is_csi_migration_on

if TYPE_CHECKING:
    from wasmsched.api.gen.k8s_io.api.core.v1.generated_pb2 import Volume

log = logging.getLogger(__name__)

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

# k8s.io/apimachinery/pkg/util/rand's alphabet (no vowels, no confusable digits).
_RAND_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


class _NotFoundError(Exception):
    """An error apierrors.IsNotFound recognizes: a lister's Get of an absent object."""


class _PluginError(Exception):
    """Any other error the plugin's helpers return in kube (fwk.AsStatus makes it an Error)."""


def _random_string(n: int) -> str:
    return "".join(random.choice(_RAND_ALPHANUMS) for _ in range(n))


def is_pod_resize_deferred(pod: Pod) -> bool:
    """resource.IsPodResizeDeferred: the PodResizePending condition says Deferred."""
    for c in pod.status.conditions:
        if c.type == "PodResizePending":
            return c.reason == "Deferred"
    return False


def get_volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    """Driver name -> max attachable volumes; a driver without an entry has no limit."""
    limits: dict[str, int] = {}
    if csi_node is None:
        return limits
    for d in csi_node.spec.drivers:
        if d.HasField("allocatable") and d.allocatable.HasField("count"):
            limits[d.name] = d.allocatable.count
    return limits


def get_volume_unique_name(driver_name: str, volume_handle: str) -> str:
    return f"{driver_name}/{volume_handle}"


def _allocatable_count(d: Any) -> int:
    return int(d.allocatable.count) if d.HasField("allocatable") and d.allocatable.HasField("count") else 0


class CSILimits(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, handle: Handle, enable_volume_limit_scaling: bool = True,
                 enable_in_place_pod_vertical_scaling_scheduler_preemption: bool = False,
                 translator: CSITranslator | None = None) -> None:
        self.handle = handle
        self.enable_volume_limit_scaling = enable_volume_limit_scaling
        self.enable_in_place_pod_vertical_scaling_scheduler_preemption = (
            enable_in_place_pod_vertical_scaling_scheduler_preemption)
        self.translator = translator or CSITranslator()
        # Volume handles made up for unbound PVCs; random so they never equal a real handle.
        self.random_volume_id_prefix = _random_string(32)

    # --- listers ------------------------------------------------------------------------------------

    def _get(self, kind: str, key: str) -> Any | None:
        return self.handle.client().get_object(kind, key)

    def _csi_node(self, node_name: str) -> CSINode | None:
        obj = self._get("CSINode", node_name)
        return obj if isinstance(obj, CSINode) else None

    # --- events -------------------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # No hint on purpose: any new CSINode could make pods rejected for CSI volumes schedulable.
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE),
                                 self.is_schedulable_after_csi_node_updated),
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                                 self.is_schedulable_after_assigned_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                                 self.is_schedulable_after_pvc_added),
            ClusterEventWithHint(ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE),
                                 self.is_schedulable_after_volume_attachment_deleted),
        ]

    def is_schedulable_after_assigned_pod_deleted(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_pair(Pod, old_obj, new_obj)
        if typed is None or typed[0] is None:
            return QueueingHint.QUEUE
        deleted = typed[0]
        if not deleted.spec.volumes:
            return QueueingHint.QUEUE_SKIP
        if not deleted.spec.nodeName and not deleted.status.nominatedNodeName:
            return QueueingHint.QUEUE_SKIP
        for vol in deleted.spec.volumes:
            src = vol.volumeSource
            if src.HasField("persistentVolumeClaim") or src.HasField("ephemeral") \
                    or self.translator.is_inline_migratable(vol):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pvc_added(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_pair(PersistentVolumeClaim, old_obj, new_obj)
        if typed is None or typed[1] is None:
            return QueueingHint.QUEUE
        added = typed[1]
        if added.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QUEUE_SKIP
        for vol in pod.spec.volumes:
            src = vol.volumeSource
            if src.HasField("persistentVolumeClaim"):
                pvc_name = src.persistentVolumeClaim.claimName
            elif src.HasField("ephemeral"):
                pvc_name = volume_claim_name(pod, vol.name)
            else:
                continue
            if pvc_name == added.metadata.name:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_volume_attachment_deleted(self, pod: Pod, old_obj: Any,
                                                       new_obj: Any) -> QueueingHint:
        typed = as_pair(VolumeAttachment, old_obj, new_obj)
        if typed is None or typed[0] is None:
            return QueueingHint.QUEUE
        deleted = typed[0]
        for vol in pod.spec.volumes:
            if vol.volumeSource.HasField("persistentVolumeClaim"):
                return QueueingHint.QUEUE
            if not self.translator.is_inline_migratable(vol):
                continue
            try:
                translated = self.translator.translate_in_tree_inline_volume_to_csi(vol, pod.metadata.namespace)
            except TranslationError as e:
                # kube returns Queue with the error, which the queue logs.
                log.info("converting volume(%s) from inline to csi: %s", vol.name, e)
                return QueueingHint.QUEUE
            if deleted.spec.attacher == translated.driver:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_node_updated(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_both(CSINode, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        old, new = typed
        old_limits = {d.name: _allocatable_count(d) for d in old.spec.drivers}
        # Only a raised limit (a new driver with a limit counts as raised from 0) can help.
        for d in new.spec.drivers:
            if _allocatable_count(d) > old_limits.get(d.name, 0):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # --- PreFilter / Filter -------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if self.enable_in_place_pod_vertical_scaling_scheduler_preemption and is_pod_resize_deferred(pod):
            return None, Status.skip()
        for vol in pod.spec.volumes:
            src = vol.volumeSource
            if src.HasField("persistentVolumeClaim") or src.HasField("ephemeral") \
                    or self.translator.is_inline_migratable(vol):
                return None, None
        return None, Status.skip()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return self._filter(pod, node_info, None)

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        # kube looks VolumeAttachments up in an index by node; one index serves the whole batch
        # (the objects do not change while it runs).
        index: dict[str, list[VolumeAttachment]] | None = None

        def vas_on(node_name: str) -> list[VolumeAttachment]:
            nonlocal index
            if index is None:
                index = self._volume_attachments_by_node()
            return index.get(node_name, [])

        return verdicts_of(self._filter(pod, ni, vas_on) for ni in batch.node_infos)

    def _filter(self, pod: Pod, node_info: NodeInfo,
                vas_on: Callable[[str], list[VolumeAttachment]] | None) -> Status | None:
        if self.enable_in_place_pod_vertical_scaling_scheduler_preemption and is_pod_resize_deferred(pod):
            return None
        # A pod without volumes always fits.
        if not pod.spec.volumes:
            return None
        node = node_info.node
        node_name = node.metadata.name if node is not None else ""
        # No CSINode (yet) is no error: the node simply has no limits.
        csi_node = self._csi_node(node_name)

        new_volumes: dict[str, str] = {}
        try:
            self._filter_attachable_volumes(pod, csi_node, True, new_volumes)
        except _NotFoundError as e:
            # The PVC is missing: the pod cannot schedule anywhere until it is created.
            return Status.unresolvable(str(e))
        except _PluginError as e:
            return Status.error(e)
        if not new_volumes:
            return None

        if self.enable_volume_limit_scaling:
            # Insertion order where kube ranges over a map: with several drivers missing, kube's
            # message names a random one of them.
            for driver_name in new_volumes.values():
                if not self._check_csi_driver_on_node(driver_name, csi_node):
                    return Status.unschedulable(f"{driver_name} CSI driver is not installed on the node")

        node_volume_limits = get_volume_limits(csi_node)
        if not node_volume_limits:
            return None

        attached_volumes: dict[str, str] = {}
        try:
            for pi in node_info.pods:
                self._filter_attachable_volumes(pi.pod, csi_node, False, attached_volumes)
        except (_NotFoundError, _PluginError) as e:
            return Status.error(e)

        attached_volume_count: dict[str, int] = {}
        for unique_name, driver_name in attached_volumes.items():
            # A volume shared by several pods is attached once.
            new_volumes.pop(unique_name, None)
            attached_volume_count[driver_name] = attached_volume_count.get(driver_name, 0) + 1

        vas = vas_on(node_name) if vas_on is not None else self._volume_attachments_by_node().get(node_name, [])
        for unique_name, driver_name in self._get_node_volume_attachment_info(vas).items():
            if unique_name not in attached_volumes:
                attached_volume_count[driver_name] = attached_volume_count.get(driver_name, 0) + 1

        new_volume_count: dict[str, int] = {}
        for driver_name in new_volumes.values():
            new_volume_count[driver_name] = new_volume_count.get(driver_name, 0) + 1

        for driver_name, count in new_volume_count.items():
            max_volume_limit = node_volume_limits.get(driver_name)
            if max_volume_limit is not None and attached_volume_count.get(driver_name, 0) + count > max_volume_limit:
                return Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def _check_csi_driver_on_node(self, plugin_name: str, csi_node: CSINode | None) -> bool:
        """Whether the driver is on the node, or need not be (no CSIDriver object, or one that does
        not set preventPodSchedulingIfMissing: it may not even be a CSI driver)."""
        driver = self._get("CSIDriver", plugin_name)
        if not isinstance(driver, CSIDriver):
            return True
        spec = driver.spec
        if not (spec.HasField("preventPodSchedulingIfMissing") and spec.preventPodSchedulingIfMissing):
            return True
        if csi_node is None:
            return False
        return any(d.name == plugin_name for d in csi_node.spec.drivers)

    def _filter_attachable_volumes(self, pod: Pod, csi_node: CSINode | None, new_pod: bool,
                                   result: dict[str, str]) -> None:
        """Adds the pod's attachable volumes to `result` (unique volume name -> CSI driver name).

        Raises _NotFoundError for a missing PVC of the new pod, _PluginError for other errors.
        """
        namespace = pod.metadata.namespace
        for vol in pod.spec.volumes:
            src = vol.volumeSource
            is_ephemeral = False
            if src.HasField("persistentVolumeClaim"):
                pvc_name = src.persistentVolumeClaim.claimName
            elif src.HasField("ephemeral"):
                # Generic ephemeral volumes use a PVC with a computed name, owned by the pod.
                pvc_name = volume_claim_name(pod, vol.name)
                is_ephemeral = True
            else:
                # An inline volume counts when its in-tree plugin was migrated to CSI; the others
                # are not CSI volumes.
                self._check_attachable_inline_volume(vol, csi_node, pod, result)
                continue

            if not pvc_name:
                raise _PluginError("PersistentVolumeClaim had no name")

            pvc = self._get("PersistentVolumeClaim", f"{namespace}/{pvc_name}" if namespace else pvc_name)
            if not isinstance(pvc, PersistentVolumeClaim):
                if new_pod:
                    # The new pod cannot run without its PVC.
                    raise _NotFoundError(
                        f'looking up PVC {namespace}/{pvc_name}: persistentvolumeclaims "{pvc_name}" not found')
                # An existing pod's unknown PVC may not be attached: not counted.
                continue

            if is_ephemeral:
                msg = volume_is_for_pod(pod, pvc)
                if msg is not None:
                    raise _PluginError(msg)

            driver_name, volume_handle = self._get_csi_driver_info(csi_node, pvc)
            if not driver_name or not volume_handle:
                continue
            result[get_volume_unique_name(driver_name, volume_handle)] = driver_name

    def _check_attachable_inline_volume(self, vol: Volume, csi_node: CSINode | None, pod: Pod,
                                        result: dict[str, str]) -> None:
        if not self.translator.is_inline_migratable(vol):
            return
        try:
            in_tree_provisioner_name = self.translator.get_in_tree_plugin_name_from_spec(None, vol)
        except TranslationError as e:
            raise _PluginError(f"looking up provisioner name for volume {vol.name}: {e}") from None
        if not is_csi_migration_on(csi_node, in_tree_provisioner_name):
            return
        try:
            translated = self.translator.translate_in_tree_inline_volume_to_csi(vol, pod.metadata.namespace)
        except TranslationError as e:
            raise _PluginError(f"converting volume({vol.name}) from inline to csi: {e}") from None
        try:
            driver_name = self.translator.get_csi_name_from_in_tree_name(in_tree_provisioner_name)
        except TranslationError as e:
            raise _PluginError(
                f"looking up CSI driver name for provisioner {in_tree_provisioner_name}: {e}") from None
        result[get_volume_unique_name(driver_name, translated.volume_handle)] = driver_name

    def _get_csi_driver_info(self, csi_node: CSINode | None, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        """The CSI driver and volume handle of the PVC's volume; ("", "") when it is not counted.

        In-tree volumes migrated to CSI give their CSI driver's name and handle.
        """
        pv_name = pvc.spec.volumeName
        if not pv_name:
            return self._get_csi_driver_info_from_sc(csi_node, pvc)
        pv = self._get("PersistentVolume", pv_name)
        if not isinstance(pv, PersistentVolume):
            # The PV was deleted, or the PVC is prebound to a PV not created yet: count by class.
            return self._get_csi_driver_info_from_sc(csi_node, pvc)

        source = pv.spec.persistentVolumeSource
        if source.HasField("csi"):
            return source.csi.driver, source.csi.volumeHandle
        if not self.translator.is_pv_migratable(pv):
            return "", ""
        try:
            plugin_name = self.translator.get_in_tree_plugin_name_from_spec(pv, None)
        except TranslationError:
            return "", ""
        if not is_csi_migration_on(csi_node, plugin_name):
            return "", ""
        try:
            translated = self.translator.translate_in_tree_pv_to_csi(pv)
        except TranslationError:
            return "", ""
        return translated.driver, translated.volume_handle

    def _get_csi_driver_info_from_sc(self, csi_node: CSINode | None,
                                     pvc: PersistentVolumeClaim) -> tuple[str, str]:
        """The CSI driver of the PVC's StorageClass and a made-up handle unique to the PVC."""
        sc_name = get_persistent_volume_claim_class(pvc)
        # Without a class the PVC binds immediately, so it must be bound before scheduling: not counted.
        if not sc_name:
            return "", ""
        storage_class = self._get("StorageClass", sc_name)
        if not isinstance(storage_class, StorageClass):
            return "", ""
        # If the PVC binds while this runs and another pod on the node uses the same volume, the
        # volume is counted twice; the random prefix keeps it from colliding with real handles.
        volume_handle = f"{self.random_volume_id_prefix}-{pvc.metadata.namespace}/{pvc.metadata.name}"
        provisioner = storage_class.provisioner
        if self.translator.is_migratable_intree_plugin_by_name(provisioner):
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            try:
                driver_name = self.translator.get_csi_name_from_in_tree_name(provisioner)
            except TranslationError:
                return "", ""
            return driver_name, volume_handle
        return provisioner, volume_handle

    def _volume_attachments_by_node(self) -> dict[str, list[VolumeAttachment]]:
        """kube's VolumeAttachment indexer on spec.nodeName."""
        index: dict[str, list[VolumeAttachment]] = {}
        for va in self.handle.client().list_objects("VolumeAttachment"):
            if isinstance(va, VolumeAttachment):
                index.setdefault(va.spec.nodeName, []).append(va)
        return index

    def _get_node_volume_attachment_info(self, vas: list[VolumeAttachment]) -> dict[str, str]:
        """Unique volume name -> attacher of a node's VolumeAttachments of CSI PVs."""
        out: dict[str, str] = {}
        for va in vas:
            if not va.spec.attacher:
                continue
            if not va.spec.source.HasField("persistentVolumeName"):
                continue
            pv = self._get("PersistentVolume", va.spec.source.persistentVolumeName)
            if not isinstance(pv, PersistentVolume):
                continue
            if not pv.spec.persistentVolumeSource.HasField("csi"):
                continue
            out[get_volume_unique_name(va.spec.attacher, pv.spec.persistentVolumeSource.csi.volumeHandle)] = \
                va.spec.attacher
        return out

