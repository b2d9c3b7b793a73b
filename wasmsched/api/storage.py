"""Storage helpers of k8s.io/component-helpers/storage/volume (helpers.go, pv_helpers.go) and
storage/ephemeral, plus v1helper.MatchTopologySelectorTerms: the volume plugins and the embedded
cluster's PV controller and provisioner (embedded/pv_provisioner.py) apply the same rules, as kube's
scheduler and kube-controller-manager share these packages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from wasmsched.api import labels as lbl
from wasmsched.api.nodeaffinity import NodeSelectorMatcher
from wasmsched.api.quantity import parse_quantity
from wasmsched.api.resources import RESOURCE_STORAGE
from wasmsched.api.types import Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
MIGRATED_PLUGINS_ANNOTATION_KEY = "storage.alpha.kubernetes.io/migrated-plugins"

VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
VOLUME_AVAILABLE = "Available"
VOLUME_BOUND = "Bound"
CLAIM_BOUND = "Bound"
CLAIM_LOST = "Lost"
FILESYSTEM = "Filesystem"


def get_persistent_volume_claim_class(claim: PersistentVolumeClaim) -> str:
    """The beta annotation wins over spec.storageClassName; "" when neither is set."""
    ann = claim.metadata.annotations
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return ann[BETA_STORAGE_CLASS_ANNOTATION]
    if claim.spec.HasField("storageClassName"):
        return claim.spec.storageClassName
    return ""


def get_persistent_volume_class(pv: PersistentVolume) -> str:
    ann = pv.metadata.annotations
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return ann[BETA_STORAGE_CLASS_ANNOTATION]
    return pv.spec.storageClassName


def storage_request(claim: PersistentVolumeClaim) -> int:
    """claim.spec.resources.requests[storage].Value(), 0 when absent (without inserting the key)."""
    q = claim.spec.resources.requests.get(RESOURCE_STORAGE)
    return parse_quantity(q.string).value() if q is not None and q.string else 0


def has_storage_request(claim: PersistentVolumeClaim) -> bool:
    return RESOURCE_STORAGE in claim.spec.resources.requests


def pv_capacity(pv: PersistentVolume) -> int:
    q = pv.spec.capacity.get(RESOURCE_STORAGE)
    return parse_quantity(q.string).value() if q is not None and q.string else 0


def check_node_affinity(pv: PersistentVolume, node_labels: Mapping[str, str]) -> str | None:
    """volume.CheckNodeAffinity: None when the PV may be used on a node with these labels, else the
    error text."""
    if not pv.spec.HasField("nodeAffinity") or not pv.spec.nodeAffinity.HasField("required"):
        return None
    node = Node()
    node.metadata.labels.update(node_labels)
    matcher = NodeSelectorMatcher.compile(pv.spec.nodeAffinity.required)
    if matcher.match(node):
        return None
    errs = matcher.errors()
    if errs:
        return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
    return "no matching NodeSelectorTerms"


def is_volume_bound_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    if not pv.spec.HasField("claimRef"):
        return False
    ref = pv.spec.claimRef
    if claim.metadata.name != ref.name or claim.metadata.namespace != ref.namespace:
        return False
    return not (ref.uid and claim.metadata.uid != ref.uid)


def get_bind_volume_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> tuple[PersistentVolume, bool]:
    """volume.GetBindVolumeToClaim: a copy of the PV bound to the claim, and whether it changed."""
    dirty = False
    should_set_bound_by_controller = not is_volume_bound_to_claim(pv, claim)
    clone = PersistentVolume()
    clone.CopyFrom(pv)
    ref = pv.spec.claimRef
    if (not pv.spec.HasField("claimRef") or ref.name != claim.metadata.name
            or ref.namespace != claim.metadata.namespace or ref.uid != claim.metadata.uid):
        clone.spec.claimRef.Clear()
        new_ref = clone.spec.claimRef
        # reference.GetReference: kind and apiVersion from the scheme, the rest from the object's meta.
        new_ref.kind = "PersistentVolumeClaim"
        new_ref.apiVersion = "v1"
        new_ref.namespace = claim.metadata.namespace
        new_ref.name = claim.metadata.name
        new_ref.uid = claim.metadata.uid
        new_ref.resourceVersion = claim.metadata.resourceVersion
        dirty = True
    if should_set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in clone.metadata.annotations:
        clone.metadata.annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        dirty = True
    return clone, dirty


def check_volume_mode_mismatches(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    requested = claim.spec.volumeMode if claim.spec.HasField("volumeMode") else FILESYSTEM
    have = pv.spec.volumeMode if pv.spec.HasField("volumeMode") else FILESYSTEM
    return requested != have


def check_access_modes(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    modes = set(pv.spec.accessModes)
    return all(m in modes for m in claim.spec.accessModes)


def _vac(spec: object) -> str:
    return spec.volumeAttributesClassName if spec.HasField("volumeAttributesClassName") else ""  # type: ignore[attr-defined]


def find_matching_volume(claim: PersistentVolumeClaim, volumes: Sequence[PersistentVolume], node: Node | None,
                         excluded: Mapping[str, PersistentVolume], delay_binding: bool,
                         vac_enabled: bool = True) -> PersistentVolume | None:
    """volume.FindMatchingVolume: the PV pre-bound to the claim, else the smallest available one that
    fits (class, size, mode, selector, node affinity, and in the scheduler path access modes).

    Raises ValueError where kube returns an error (an unparsable claim selector, or a
    volumeAttributesClassName with the feature disabled)."""
    key = f"{claim.metadata.namespace}/{claim.metadata.name}"
    if not vac_enabled and _vac(claim.spec):
        raise ValueError(f"unsupported volumeAttributesClassName is set on claim {key} when the feature-gate "
                         "VolumeAttributesClass is disabled")
    smallest: PersistentVolume | None = None
    smallest_qty = 0
    requested = storage_request(claim)
    requested_class = get_persistent_volume_claim_class(claim)
    selector: lbl.Selector | None = None
    if claim.spec.HasField("selector"):
        try:
            selector = lbl.compile_label_selector(claim.spec.selector)
        except lbl.SelectorError as e:
            raise ValueError(f"error creating internal label selector for claim: {key}: {e}") from e

    for pv in volumes:
        if pv.metadata.name in excluded:
            continue
        if pv.spec.HasField("claimRef") and not is_volume_bound_to_claim(pv, claim):
            continue
        qty = pv_capacity(pv)
        if qty < requested:
            continue
        if check_volume_mode_mismatches(claim, pv):
            continue
        claim_vac, volume_vac = _vac(claim.spec), _vac(pv.spec)
        if vac_enabled and claim_vac != volume_vac:
            continue
        if not vac_enabled and volume_vac:
            continue
        if pv.metadata.HasField("deletionTimestamp"):
            continue
        node_affinity_valid = True
        if node is not None:
            node_affinity_valid = check_node_affinity(pv, node.metadata.labels) is None
        if is_volume_bound_to_claim(pv, claim):
            # A pre-bound PV whose affinity excludes the node rules out the node for this claim.
            return pv if node_affinity_valid else None
        if node is None and delay_binding:
            continue
        if pv.status.phase != VOLUME_AVAILABLE:
            continue
        if selector is not None and not selector.matches(pv.metadata.labels):
            continue
        if get_persistent_volume_class(pv) != requested_class:
            continue
        if not node_affinity_valid:
            continue
        if node is not None and not check_access_modes(claim, pv):
            continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = pv, qty
    return smallest


def match_topology_selector_terms(cls: StorageClass, node_labels: Mapping[str, str]) -> bool:
    """v1helper.MatchTopologySelectorTerms on the class's allowedTopologies: no terms match every node,
    an empty term none; requirements are `key in (values)`."""
    terms = cls.allowedTopologies
    if not terms:
        return True
    for term in terms:
        if not term.matchLabelExpressions:
            continue
        try:
            reqs = [lbl.new_requirement(e.key, lbl.IN, e.values) for e in term.matchLabelExpressions]
        except lbl.SelectorError:
            continue
        if all(r.matches(node_labels) for r in reqs):
            return True
    return False


def volume_claim_name(pod: Pod, volume_name: str) -> str:
    """ephemeral.VolumeClaimName: the PVC a generic ephemeral volume uses."""
    return f"{pod.metadata.name}-{volume_name}"


def volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """ephemeral.VolumeIsForPod: None when the pod controls the PVC, else the error text."""
    controller = next((ref for ref in pvc.metadata.ownerReferences if ref.controller), None)
    controlled = controller is not None and controller.uid == pod.metadata.uid
    if pvc.metadata.namespace != pod.metadata.namespace or not controlled:
        return (f"PVC {pvc.metadata.namespace}/{pvc.metadata.name} was not created for pod "
                f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)")
    return None


def pod_claim_name(pod: Pod, volume: object) -> tuple[str, bool] | None:
    """(claim name, is generic ephemeral) of a pod volume that uses a PVC; None for other volumes."""
    src = volume.volumeSource  # type: ignore[attr-defined]
    if src.HasField("persistentVolumeClaim"):
        return src.persistentVolumeClaim.claimName, False
    if src.HasField("ephemeral"):
        return volume_claim_name(pod, volume.name), True  # type: ignore[attr-defined]
    return None
