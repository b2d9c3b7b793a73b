"""The scheduler's volume binder (volumebinding/binder.go): sorts a pod's claims, finds PVs or
provisioning for them on a node, assumes the choice in the PV/PVC assume caches (Reserve), writes it
to the API and waits for the PV controller to finish binding (PreBind).

Errors are raised as exceptions carrying kube's messages; the plugin turns them into Error statuses.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from wasmsched.api import labels as lbl
from wasmsched.api.quantity import parse_quantity
from wasmsched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    check_node_affinity,
    find_matching_volume,
    get_bind_volume_to_claim,
    get_persistent_volume_claim_class,
    has_storage_request,
    match_topology_selector_terms,
    pod_claim_name,
    pv_capacity,
    storage_request,
    volume_is_for_pod,
)
from wasmsched.api.types import (
    CSINode,
    CSIStorageCapacity,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)
from wasmsched.framework.interface import ClusterClient
from wasmsched.plugins.volumebinding.assume_cache import (
    NotFoundError,
    PVAssumeCache,
    PVCAssumeCache,
    VolumeBindingError,
)
from wasmsched.plugins.volumebinding.csi_migration import try_translate_pv_to_csi

# ConflictReasons: why volume binding is impossible on a node.
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


@dataclass(slots=True)
class StorageResource:
    requested: int = 0
    capacity: int = 0


@dataclass(slots=True)
class BindingInfo:
    """A PVC and the PV proposed for it."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume

    def storage_class_name(self) -> str:
        return self.pv.spec.storageClassName

    def storage_resource(self) -> StorageResource:
        return StorageResource(storage_request(self.pvc), pv_capacity(self.pv))


@dataclass(slots=True)
class DynamicProvision:
    pvc: PersistentVolumeClaim
    node_capacity: CSIStorageCapacity | None = None


@dataclass(slots=True)
class PodVolumes:
    """The pod's volume decisions for one node. None and [] differ as kube's nil and empty slices:
    FindPodVolumes leaves None when there is nothing, AssumePodVolumes always sets lists."""

    static_bindings: list[BindingInfo] | None = None
    dynamic_provisions: list[DynamicProvision] | None = None


@dataclass(slots=True)
class PodVolumeClaims:
    bound_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    # Unbound, WaitForFirstConsumer (binding or provisioning is the scheduler's to decide).
    unbound_claims_delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    # Unbound, Immediate (or pre-bound to a PV): the PV controller should have bound them already.
    unbound_claims_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    # class name -> its PVs, for the classes of unbound_claims_delay_binding.
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = field(default_factory=dict)


def _pvc_key(pvc: PersistentVolumeClaim) -> str:
    return f"{pvc.metadata.namespace}/{pvc.metadata.name}"


def _compare_resource_version(a: str, b: str) -> int:
    """storage.APIObjectVersioner.CompareResourceVersion (unparsable versions count as 0)."""
    def parse(v: str) -> int:
        try:
            return int(v) if v else 0
        except ValueError:
            return 0
    x, y = parse(a), parse(b)
    return (x > y) - (x < y)


def volume_limit(capacity: CSIStorageCapacity) -> int | None:
    """The largest volume the capacity allows: maximumVolumeSize when set (more precise), else capacity."""
    if capacity.HasField("maximumVolumeSize"):
        return parse_quantity(capacity.maximumVolumeSize.string).value()
    if capacity.HasField("capacity"):
        return parse_quantity(capacity.capacity.string).value()
    return None


def _capacity_sufficient(capacity: CSIStorageCapacity, size: int) -> bool:
    limit = volume_limit(capacity)
    return limit is not None and limit >= size


def _node_has_access(node: Node, capacity: CSIStorageCapacity) -> bool:
    if not capacity.HasField("nodeTopology"):
        return False
    try:
        selector = lbl.compile_label_selector(capacity.nodeTopology)
    except lbl.SelectorError:
        return False
    return selector.matches(node.metadata.labels)


class VolumeBinder:
    """volumeBinder over the handle's ClusterClient (its listers) with its own PV/PVC assume caches."""

    def __init__(self, client: ClusterClient, bind_timeout: float, enable_volume_attributes_class: bool = True,
                 poll_interval: float = 1.0, sleep: Callable[[float], None] = time.sleep,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.bind_timeout = bind_timeout
        self.enable_volume_attributes_class = enable_volume_attributes_class
        self.pv_cache = PVAssumeCache(client)
        self.pvc_cache = PVCAssumeCache(client)
        self.poll_interval = poll_interval
        self._sleep = sleep
        self._monotonic = monotonic

    # ----- claims of a pod ----------------------------------------------------------------------

    def is_pvc_fully_bound(self, pvc: PersistentVolumeClaim) -> bool:
        return bool(pvc.spec.volumeName) and ANN_BIND_COMPLETED in pvc.metadata.annotations

    def _is_pvc_bound(self, namespace: str, name: str) -> tuple[bool, PersistentVolumeClaim]:
        key = f"{namespace}/{name}"
        try:
            pvc = self.pvc_cache.get(key)
        except NotFoundError as e:
            raise VolumeBindingError(f'error getting PVC "{key}": {e}') from e
        return self.is_pvc_fully_bound(pvc), pvc

    def _is_volume_bound(self, pod: Pod, vol: object) -> tuple[bool, PersistentVolumeClaim | None]:
        claim = pod_claim_name(pod, vol)
        if claim is None:
            return True, None
        name, ephemeral = claim
        bound, pvc = self._is_pvc_bound(pod.metadata.namespace, name)
        if ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err is not None:
                raise VolumeBindingError(err)
        return bound, pvc

    def _are_pod_volumes_bound(self, pod: Pod) -> bool:
        for vol in pod.spec.volumes:
            try:
                bound, _ = self._is_volume_bound(pod, vol)
            except VolumeBindingError:
                bound = False
            if not bound:
                return False
        return True

    def _is_delay_binding_mode(self, pvc: PersistentVolumeClaim) -> bool:
        name = get_persistent_volume_claim_class(pvc)
        if not name:
            return False
        cls: StorageClass | None = self.client.get_object("StorageClass", name)
        if cls is None:
            return False
        if not cls.HasField("volumeBindingMode"):
            raise VolumeBindingError(f'VolumeBindingMode not set for StorageClass "{name}"')
        return cls.volumeBindingMode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """The pod's PVCs as bound, unbound WaitForFirstConsumer and unbound immediate (pre-bound ones
        included), with the PVs of the classes of the unbound WaitForFirstConsumer claims."""
        claims = PodVolumeClaims()
        for vol in pod.spec.volumes:
            bound, pvc = self._is_volume_bound(pod, vol)
            if pvc is None:
                continue
            if bound:
                claims.bound_claims.append(pvc)
            elif self._is_delay_binding_mode(pvc) and not pvc.spec.volumeName:
                claims.unbound_claims_delay_binding.append(pvc)
            else:
                claims.unbound_claims_immediate.append(pvc)
        for pvc in claims.unbound_claims_delay_binding:
            name = get_persistent_volume_claim_class(pvc)
            claims.unbound_volumes_delay_binding[name] = self.pv_cache.list_pvs(name)
        return claims

    # ----- Filter -------------------------------------------------------------------------------

    def find_pod_volumes(self, pod: Pod, claims: PodVolumeClaims, node: Node) -> tuple[PodVolumes, list[str]]:
        """The PVs to bind and the claims to provision for the pod on `node`, and the reasons the node
        does not fit (empty when it does)."""
        unbound_satisfied = bound_satisfied = sufficient_storage = bound_pvs_found = True
        static: list[BindingInfo] = []
        dynamic: list[DynamicProvision] = []

        def result() -> tuple[PodVolumes, list[str]]:
            reasons = []
            if not bound_satisfied:
                reasons.append(ERR_REASON_NODE_CONFLICT)
            if not unbound_satisfied:
                reasons.append(ERR_REASON_BIND_CONFLICT)
            if not sufficient_storage:
                reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
            if not bound_pvs_found:
                reasons.append(ERR_REASON_PV_NOT_EXIST)
            return PodVolumes(static or None, dynamic or None), reasons

        if claims.bound_claims:
            bound_satisfied, bound_pvs_found = self._check_bound_claims(claims.bound_claims, node)

        if claims.unbound_claims_delay_binding:
            to_find: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            for claim in claims.unbound_claims_delay_binding:
                selected = claim.metadata.annotations.get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node.metadata.name:
                        # Provisioning was already started for another node.
                        unbound_satisfied = False
                        return result()
                    to_provision.append(claim)
                else:
                    to_find.append(claim)
            if to_find:
                unbound_satisfied, static, unbound = self._find_matching_volumes(
                    to_find, claims.unbound_volumes_delay_binding, node)
                to_provision.extend(unbound)
            if to_provision:
                unbound_satisfied, sufficient_storage, provisions = self._check_volume_provisions(to_provision, node)
                dynamic = provisions or []
        return result()

    def _check_bound_claims(self, claims: list[PersistentVolumeClaim], node: Node) -> tuple[bool, bool]:
        """(node affinity satisfied, every PV found)."""
        # kube goes on without a CSINode (its lister error is only logged)
        csi_node: CSINode | None = self.client.get_object("CSINode", node.metadata.name)
        for pvc in claims:
            try:
                pv = self.pv_cache.get(pvc.spec.volumeName)
            except NotFoundError:
                return True, False
            # a migrated in-tree PV is checked as its CSI translation, whose node affinity has the
            # driver's topology key in place of the zone
            pv = try_translate_pv_to_csi(pv, csi_node)
            if check_node_affinity(pv, node.metadata.labels) is not None:
                return False, True
        return True, True

    def _find_matching_volumes(
        self, claims: list[PersistentVolumeClaim], volumes: dict[str, list[PersistentVolume]], node: Node,
    ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        # The smallest claims pick first, so that each gets the smallest PV that fits.
        ordered = sorted(claims, key=storage_request)
        chosen: dict[str, PersistentVolume] = {}
        bindings: list[BindingInfo] = []
        unbound: list[PersistentVolumeClaim] = []
        found = True
        for pvc in ordered:
            pvs = volumes.get(get_persistent_volume_claim_class(pvc), [])
            try:
                pv = find_matching_volume(pvc, pvs, node, chosen, True, self.enable_volume_attributes_class)
            except ValueError as e:
                raise VolumeBindingError(str(e)) from e
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen[pv.metadata.name] = pv
            bindings.append(BindingInfo(pvc, pv))
        return found, bindings, unbound

    def _check_volume_provisions(
        self, claims: list[PersistentVolumeClaim], node: Node,
    ) -> tuple[bool, bool, list[DynamicProvision] | None]:
        """(provisioning possible, storage sufficient, the provisions)."""
        provisions: list[DynamicProvision] = []
        for claim in claims:
            class_name = get_persistent_volume_claim_class(claim)
            if not class_name:
                raise VolumeBindingError(f'no class for claim "{_pvc_key(claim)}"')
            cls: StorageClass | None = self.client.get_object("StorageClass", class_name)
            if cls is None:
                raise VolumeBindingError(f'failed to find storage class "{class_name}"')
            provisioner = cls.provisioner
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, None
            if not match_topology_selector_terms(cls, node.metadata.labels):
                return False, True, None
            sufficient, capacity = self._has_enough_capacity(provisioner, claim, cls, node)
            if not sufficient:
                return True, False, None
            provisions.append(DynamicProvision(claim, capacity))
        return True, True, provisions

    def _has_enough_capacity(self, provisioner: str, claim: PersistentVolumeClaim, cls: StorageClass,
                             node: Node) -> tuple[bool, CSIStorageCapacity | None]:
        if not has_storage_request(claim):
            return True, None
        driver = self.client.get_object("CSIDriver", provisioner)
        # Only CSI drivers that opt into capacity tracking are checked.
        if driver is None or not (driver.spec.HasField("storageCapacity") and driver.spec.storageCapacity):
            return True, None
        size = storage_request(claim)
        for capacity in self.client.list_objects("CSIStorageCapacity"):
            if (capacity.storageClassName == cls.metadata.name and _capacity_sufficient(capacity, size)
                    and _node_has_access(node, capacity)):
                return True, capacity
        return False, None

    # ----- Reserve / Unreserve ------------------------------------------------------------------

    def assume_pod_volumes(self, pod: Pod, node_name: str, pod_volumes: PodVolumes) -> bool:
        """Assumes the chosen PVs pre-bound and the claims to provision annotated with the node, in the
        caches only, and rewrites `pod_volumes` with the assumed objects. True when every volume is
        bound already (nothing to do in PreBind)."""
        if self._are_pod_volumes_bound(pod):
            return True
        new_bindings: list[BindingInfo] = []
        for binding in pod_volumes.static_bindings or []:
            new_pv, dirty = get_bind_volume_to_claim(binding.pv, binding.pvc)
            if dirty:
                try:
                    self.pv_cache.assume(new_pv)
                except VolumeBindingError:
                    self._revert_assumed_pvs(new_bindings)
                    raise
            new_bindings.append(BindingInfo(binding.pvc, new_pv))
        new_provisions: list[DynamicProvision] = []
        for provision in pod_volumes.dynamic_provisions or []:
            clone = PersistentVolumeClaim()
            clone.CopyFrom(provision.pvc)
            clone.metadata.annotations[ANN_SELECTED_NODE] = node_name
            try:
                self.pvc_cache.assume(clone)
            except VolumeBindingError:
                self._revert_assumed_pvs(new_bindings)
                self._revert_assumed_pvcs([p.pvc for p in new_provisions])
                raise
            new_provisions.append(DynamicProvision(clone))
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = new_provisions
        return False

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        self._revert_assumed_pvs(pod_volumes.static_bindings or [])
        self._revert_assumed_pvcs([p.pvc for p in pod_volumes.dynamic_provisions or []])

    def _revert_assumed_pvs(self, bindings: list[BindingInfo]) -> None:
        for b in bindings:
            self.pv_cache.restore(b.pv)

    def _revert_assumed_pvcs(self, claims: list[PersistentVolumeClaim]) -> None:
        for c in claims:
            self.pvc_cache.restore(c)

    # ----- PreBind ------------------------------------------------------------------------------

    def bind_pod_volumes(self, pod: Pod, pod_volumes: PodVolumes) -> None:
        """Writes the assumed bindings and provisioning requests, then waits, at most bind_timeout, until
        the PV controller (and provisioners) bound every claim.

        kube polls every second starting one second after the writes; here the first check is made at
        once (the same outcome, without the idle second when the controllers are already done)."""
        bindings = pod_volumes.static_bindings
        claims = None if pod_volumes.dynamic_provisions is None else [p.pvc for p in pod_volumes.dynamic_provisions]
        self._bind_api_update(pod, bindings, claims)
        if self.bind_timeout <= 0:
            raise VolumeBindingError("binding volumes: context deadline exceeded")
        deadline = self._monotonic() + self.bind_timeout
        while True:
            try:
                if self._check_bindings(pod, bindings, claims):
                    return
            except VolumeBindingError as e:
                raise VolumeBindingError(f"binding volumes: {e}") from e
            remaining = deadline - self._monotonic()
            if remaining <= 0 or self.client.settles_synchronously:
                # On the embedded cluster the controllers acted within the writes: what is not bound now
                # never will be, and kube's outcome after bindTimeoutSeconds is this error.
                raise VolumeBindingError("binding volumes: context deadline exceeded")
            self._sleep(min(self.poll_interval, remaining))

    def _bind_api_update(self, pod: Pod, bindings: list[BindingInfo] | None,
                         claims: list[PersistentVolumeClaim] | None) -> None:
        pod_name = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if bindings is None:
            raise VolumeBindingError(f'failed to get cached bindings for pod "{pod_name}"')
        if claims is None:
            raise VolumeBindingError(f'failed to get cached claims to provision for pod "{pod_name}"')
        done_bindings = done_claims = 0
        try:
            for binding in bindings:
                binding.pv = self.client.update_object(binding.pv)
                done_bindings += 1
            # The selected-node annotation asks the provisioner for a volume; it removes the annotation
            # again if provisioning fails.
            for i, claim in enumerate(claims):
                claims[i] = self.client.update_object(claim)
                done_claims += 1
        finally:
            # Only what was not written is reverted: the rest is in the API now, with no rollback.
            self._revert_assumed_pvs(bindings[done_bindings:])
            self._revert_assumed_pvcs(claims[done_claims:])

    def _check_bindings(self, pod: Pod, bindings: list[BindingInfo] | None,
                        claims: list[PersistentVolumeClaim] | None) -> bool:
        """True when every claim is fully bound; raises when binding must be retried by scheduling the
        pod again. Reads the API objects, not the assumed ones: later cycles may assume again."""
        pod_name = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if bindings is None:
            raise VolumeBindingError(f'failed to get cached bindings for pod "{pod_name}"')
        if claims is None:
            raise VolumeBindingError(f'failed to get cached claims to provision for pod "{pod_name}"')
        node_name = pod.spec.nodeName
        node: Node | None = self.client.get_object("Node", node_name)
        if node is None:
            raise VolumeBindingError(f'failed to get node "{node_name}": nodes "{node_name}" not found')
        if self.client.get_pod(pod.metadata.namespace, pod.metadata.name) is None:
            raise VolumeBindingError(f'pod does not exist any more: pods "{pod.metadata.name}" not found')

        for binding in bindings:
            try:
                pv = self.pv_cache.get_api_obj(binding.pv.metadata.name)
                pvc = self.pvc_cache.get_api_obj(_pvc_key(binding.pvc))
            except NotFoundError as e:
                raise VolumeBindingError(f"failed to check binding: {e}") from e
            # Our own write has not reached the cache yet.
            if _compare_resource_version(binding.pv.metadata.resourceVersion, pv.metadata.resourceVersion) > 0:
                return False
            err = check_node_affinity(pv, node.metadata.labels)
            if err is not None:
                raise VolumeBindingError(
                    f'pv "{pv.metadata.name}" node affinity doesn\'t match node "{node_name}": {err}')
            if not pv.spec.HasField("claimRef") or not pv.spec.claimRef.uid:
                raise VolumeBindingError(f'ClaimRef got reset for pv "{pv.metadata.name}"')
            if not self.is_pvc_fully_bound(pvc):
                return False

        for claim in claims:
            try:
                pvc = self.pvc_cache.get_api_obj(_pvc_key(claim))
            except NotFoundError as e:
                raise VolumeBindingError(f"failed to check provisioning pvc: {e}") from e
            if _compare_resource_version(claim.metadata.resourceVersion, pvc.metadata.resourceVersion) > 0:
                return False
            if not pvc.metadata.annotations:
                raise VolumeBindingError(f'selectedNode annotation reset for PVC "{pvc.metadata.name}"')
            if pvc.metadata.annotations.get(ANN_SELECTED_NODE, "") != node_name:
                # The provisioner removes the annotation when it fails, to have the pod rescheduled.
                raise VolumeBindingError(f'provisioning failed for PVC "{pvc.metadata.name}"')
            if pvc.spec.volumeName:
                try:
                    pv = self.pv_cache.get_api_obj(pvc.spec.volumeName)
                except NotFoundError:
                    # Possibly not in the cache yet; a deleted PV unbinds the claim eventually.
                    return False
                err = check_node_affinity(pv, node.metadata.labels)
                if err is not None:
                    raise VolumeBindingError(
                        f'pv "{pv.metadata.name}" node affinity doesn\'t match node "{node_name}": {err}')
            if not self.is_pvc_fully_bound(pvc):
                return False
        return True

