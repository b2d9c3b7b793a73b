"""VolumeBinding (volumebinding/volume_binding.go): PreFilter, Filter, PreScore, Score, Reserve,
Unreserve, PreBind and EventsToRegister over the volume binder (binder.py).

kube's PreBindPreFlight is not an extension point here: PreBind itself returns at once when every
volume was bound already.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from wasmsched.api.quantity import parse_quantity
from wasmsched.api.storage import (
    CLAIM_LOST,
    MIGRATED_PLUGINS_ANNOTATION_KEY,
    pod_claim_name,
    storage_request,
    volume_is_for_pod,
)
from wasmsched.api.types import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)
from wasmsched.config.args import MAX_CUSTOM_PRIORITY_SCORE, STORAGE_CAPACITY_SCORING, VolumeBindingArgs, get_args
from wasmsched.framework.cycle_state import CycleState, NotFoundError
from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from wasmsched.framework.interface import (
    MAX_NODE_SCORE,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreBindPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.helper.columns import ZeroScoresFastPath
from wasmsched.plugins.helper.objects import as_both, as_pair
from wasmsched.plugins.helper.shape_score import FunctionShapePoint
from wasmsched.plugins.volumebinding.binder import (
    PodVolumeClaims,
    PodVolumes,
    StorageResource,
    VolumeBinder,
    VolumeBindingError,
    volume_limit,
)
from wasmsched.plugins.volumebinding.scorer import VolumeCapacityScorer, build_scorer_function

NAME = "VolumeBinding"
STATE_KEY = NAME
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


class StateData:
    """Written by PreFilter; Filter fills pod_volumes_by_node (possibly from several threads), Reserve
    sets all_bound. Shared, not copied, by clones of the CycleState, as in kube."""

    __slots__ = ("_lock", "all_bound", "has_static_bindings", "pod_volume_claims", "pod_volumes_by_node")

    def __init__(self, pod_volume_claims: PodVolumeClaims | None = None,
                 pod_volumes_by_node: dict[str, PodVolumes] | None = None, all_bound: bool = False) -> None:
        self.all_bound = all_bound
        self.pod_volumes_by_node: dict[str, PodVolumes] = pod_volumes_by_node if pod_volumes_by_node is not None else {}
        self.pod_volume_claims = pod_volume_claims
        # Whether some node had a static binding: then Score runs even without StorageCapacityScoring.
        self.has_static_bindings = False
        self._lock = threading.Lock()

    def clone(self) -> StateData:
        return self


def _get_state_data(cs: CycleState) -> StateData | Status:
    try:
        s = cs.read(STATE_KEY)
    except NotFoundError:
        return Status.error("not found")
    if not isinstance(s, StateData):
        return Status.error("unable to convert state into stateData")
    return s


class VolumeBinding(ZeroScoresFastPath, PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ReservePlugin,
                    PreBindPlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, args: VolumeBindingArgs, handle: Handle,
                 enable_storage_capacity_scoring: bool = STORAGE_CAPACITY_SCORING) -> None:
        self.args = args
        self.handle = handle
        self.enable_storage_capacity_scoring = enable_storage_capacity_scoring
        self.binder = VolumeBinder(handle.client(), float(args.bind_timeout_seconds))
        self.scorer: VolumeCapacityScorer | None = None
        if enable_storage_capacity_scoring:
            factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
            self.scorer = build_scorer_function(
                [FunctionShapePoint(p.utilization, p.score * factor) for p in args.shape])

    # ----- EnqueueExtensions ---------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            # A missing or misconfigured class (allowedTopologies) may be fixed.
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, add_update),
                                 self.is_schedulable_after_storage_class_change),
            # Claims and volumes get bound.
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
                                 self.is_schedulable_after_persistent_volume_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update)),
            # Node labels decide PV node affinity and allowed topologies.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            # In-tree PVs are translated to CSI as the CSINode says.
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, add_update),
                                 self.is_schedulable_after_csi_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE),
                                 self.is_schedulable_after_csi_driver_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, add_update),
                                 self.is_schedulable_after_csi_storage_capacity_change),
        ]

    def is_schedulable_after_csi_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        if old_obj is None:
            return QueueingHint.QUEUE
        typed = as_both(CSINode, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        old, new = typed
        if (old.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION_KEY, "")
                != new.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION_KEY, "")):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_persistent_volume_claim_change(self, pod: Pod, old_obj: Any,
                                                            new_obj: Any) -> QueueingHint:
        typed = as_pair(PersistentVolumeClaim, old_obj, new_obj)
        if typed is None or typed[1] is None:
            return QueueingHint.QUEUE
        new = typed[1]
        if pod.metadata.namespace != new.metadata.namespace:
            return QueueingHint.QUEUE_SKIP
        for vol in pod.spec.volumes:
            claim = pod_claim_name(pod, vol)
            # Creating the claim, and almost any update of it, may make the pod schedulable.
            if claim is not None and claim[0] == new.metadata.name:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_storage_class_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_both(StorageClass, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        old, new = typed
        # volumeBindingMode is immutable; allowedTopologies is what an update can change for us.
        if list(new.allowedTopologies) != list(old.allowedTopologies):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_storage_capacity_change(self, pod: Pod, old_obj: Any,
                                                         new_obj: Any) -> QueueingHint:
        typed = as_both(CSIStorageCapacity, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        old, new = typed
        old_limit, new_limit = volume_limit(old), volume_limit(new)
        if new_limit is not None and (old_limit is None or new_limit > old_limit):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_driver_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_both(CSIDriver, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        old, new = typed
        for vol in pod.spec.volumes:
            src = vol.volumeSource
            if not src.HasField("csi") or src.csi.driver != new.metadata.name:
                continue
            old_on = old.spec.HasField("storageCapacity") and old.spec.storageCapacity
            new_on = new.spec.HasField("storageCapacity") and new.spec.storageCapacity
            if old_on and not new_on:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # ----- PreFilter / Filter --------------------------------------------------------------------

    def _pod_has_pvcs(self, pod: Pod) -> tuple[bool, str | None]:
        """Whether the pod uses PVCs, and the error that makes it unschedulable if one is unusable."""
        client = self.handle.client()
        has_pvc = False
        for vol in pod.spec.volumes:
            claim = pod_claim_name(pod, vol)
            if claim is None:
                continue
            name, ephemeral = claim
            has_pvc = True
            pvc: PersistentVolumeClaim | None = client.get_object("PersistentVolumeClaim",
                                                                 f"{pod.metadata.namespace}/{name}")
            if pvc is None:
                if ephemeral:
                    # Normal right after the pod was created: the ephemeral volume controller is behind.
                    return True, ("waiting for ephemeral volume controller to create the persistentvolumeclaim "
                                  f'"{name}"')
                return True, f'persistentvolumeclaim "{name}" not found'
            if pvc.status.phase == CLAIM_LOST:
                return True, (f'persistentvolumeclaim "{pvc.metadata.name}" bound to non-existent persistentvolume '
                              f'"{pvc.spec.volumeName}"')
            if pvc.metadata.HasField("deletionTimestamp"):
                return True, f'persistentvolumeclaim "{pvc.metadata.name}" is being deleted'
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    return True, err
        return has_pvc, None

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.spec.volumes:
            state.write(STATE_KEY, StateData())
            return None, Status.skip()
        has_pvc, err = self._pod_has_pvcs(pod)
        if err is not None:
            return None, Status.unresolvable(err)
        if not has_pvc:
            state.write(STATE_KEY, StateData())
            return None, Status.skip()
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except VolumeBindingError as e:
            return None, Status.error(e)
        if claims.unbound_claims_immediate:
            # The PV controller binds these; the pod is retried when it did.
            return None, Status.unresolvable(ERR_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, StateData(PodVolumeClaims(
            bound_claims=claims.bound_claims,
            unbound_claims_delay_binding=claims.unbound_claims_delay_binding,
            unbound_volumes_delay_binding=claims.unbound_volumes_delay_binding,
        )))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = _get_state_data(state)
        if isinstance(s, Status):
            return s
        node = node_info.node
        if node is None:
            return Status.error("node not found")
        try:
            pod_volumes, reasons = self.binder.find_pod_volumes(pod, s.pod_volume_claims or PodVolumeClaims(), node)
        except VolumeBindingError as e:
            return Status.error(e)
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, list(reasons))
        with s._lock:
            s.pod_volumes_by_node[node.metadata.name] = pod_volumes
            s.has_static_bindings = s.has_static_bindings or bool(pod_volumes.static_bindings)
        return None

    # ----- PreScore / Score ---------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if self.scorer is None:
            return Status.skip()
        s = _get_state_data(state)
        if isinstance(s, Status):
            return s
        if s.has_static_bindings or self.enable_storage_capacity_scoring:
            return None
        return Status.skip()

    def scores_nothing(self, state: CycleState) -> bool:
        """Every node scores 0: no scorer, or the pod's PreFilter found no claim to place (the common
        pod without volumes, which kube still scores node by node with StorageCapacityScoring on)."""
        if self.scorer is None:
            return True
        s = _get_state_data(state)
        return not isinstance(s, Status) and not s.pod_volumes_by_node



    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        if self.scorer is None:
            return 0, None
        s = _get_state_data(state)
        if isinstance(s, Status):
            return 0, s
        pod_volumes = s.pod_volumes_by_node.get(node_info.name)
        if pod_volumes is None:
            return 0, None
        class_resources: dict[str, StorageResource] = {}
        if pod_volumes.static_bindings or not self.enable_storage_capacity_scoring:
            for binding in pod_volumes.static_bindings or []:
                r = class_resources.setdefault(binding.storage_class_name(), StorageResource())
                sr = binding.storage_resource()
                r.requested += sr.requested
                r.capacity += sr.capacity
        else:
            for provision in pod_volumes.dynamic_provisions or []:
                if provision.node_capacity is None:
                    continue
                cls = provision.pvc.spec.storageClassName
                r = class_resources.setdefault(cls, StorageResource())
                # One capacity per class and node, however many of the pod's claims use it.
                r.capacity = volume_capacity(provision.node_capacity)
                r.requested += storage_request(provision.pvc)
        return self.scorer(class_resources), None

    # ----- Reserve / Unreserve / PreBind ---------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = _get_state_data(state)
        if isinstance(s, Status):
            return s
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            # The pod uses no PVC.
            s.all_bound = True
            return None
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod, node_name, pod_volumes)
        except VolumeBindingError as e:
            return Status.error(e)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = _get_state_data(state)
        if isinstance(s, Status):
            return
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return
        self.binder.revert_assumed_pod_volumes(pod_volumes)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = _get_state_data(state)
        if isinstance(s, Status):
            return s
        if s.all_bound:
            return None
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return Status.error(f'no pod volume found for node "{node_name}"')
        try:
            self.binder.bind_pod_volumes(pod, pod_volumes)
        except VolumeBindingError as e:
            return Status.error(e)
        return None


def volume_capacity(capacity: CSIStorageCapacity) -> int:
    """CSIStorageCapacity.capacity.Value() (0 when unset, as a nil *Quantity's would panic in kube;
    FindPodVolumes only keeps capacities with a limit, normally from capacity)."""
    return parse_quantity(capacity.capacity.string).value() if capacity.HasField("capacity") else 0


def new(args: VolumeBindingArgs | dict[str, Any] | None, handle: Handle) -> VolumeBinding:
    return VolumeBinding(get_args(VolumeBindingArgs, args), handle)
