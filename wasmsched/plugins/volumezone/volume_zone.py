"""VolumeZone (volumezone/volume_zone.go): PreFilter, Filter and EventsToRegister.

The zone and region labels of the PersistentVolumes bound to the pod's claims must match the node's
(a node without any topology label accepts every volume). Only claims are looked at, and only their
bound volumes: an unbound claim of a WaitForFirstConsumer class is skipped (the volume binder
provisions it in a matching zone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wasmsched.api.storage import VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER, get_persistent_volume_claim_class
from wasmsched.api.types import PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from wasmsched.framework.interface import EnqueueExtensions, FilterPlugin, Handle, PreFilterPlugin, PreFilterResult
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.helper.objects import as_pair, as_update

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

# ErrReasonConflict: the NoVolumeZoneConflict predicate's reason.
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_TOPOLOGY_ZONE,
    LABEL_TOPOLOGY_REGION,
)
_GA_LABEL = {
    LABEL_FAILURE_DOMAIN_BETA_REGION: LABEL_TOPOLOGY_REGION,
    LABEL_FAILURE_DOMAIN_BETA_ZONE: LABEL_TOPOLOGY_ZONE,
}

# cloud-provider's volume.LabelMultiZoneDelimiter: a PV's zone label may list several zones.
LABEL_MULTI_ZONE_DELIMITER = "__"

# Go's unicode.IsSpace, which strings.TrimSpace trims (Python's str.strip also trims \x1c-\x1f).
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
    "\u2028\u2029\u202f\u205f\u3000"


def translate_to_ga_label(label: str) -> str:
    return _GA_LABEL.get(label, label)


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """cloud-provider's LabelZonesToSet; None where it fails (an empty zone in the list)."""
    zones: set[str] = set()
    for zone in value.split(LABEL_MULTI_ZONE_DELIMITER):
        trimmed = zone.strip(_GO_SPACE)
        if not trimmed:
            return None
        zones.add(trimmed)
    return frozenset(zones)


# The NotFound errors of the informers' listers, whose resources are singular.
def pvc_not_found_message(name: str) -> str:
    return f'persistentvolumeclaim "{name}" not found'


def pv_not_found_message(name: str) -> str:
    return f'persistentvolume "{name}" not found'


def storage_class_not_found_message(name: str) -> str:
    return f'storageclass.storage.k8s.io "{name}" not found'


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One topology label of a PV: its key and the zones (or regions) its value lists."""

    pv_name: str
    key: str
    values: frozenset[str]


def get_pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """The PV's topology labels (spec.nodeAffinity is left to the VolumeBinding plugin); a label whose
    value does not parse is ignored."""
    out: list[PVTopology] = []
    labels = pv.metadata.labels
    for key in TOPOLOGY_LABELS:
        if key in labels:
            zones = label_zones_to_set(labels[key])
            if zones is None:
                continue
            out.append(PVTopology(pv.metadata.name, key, zones))
    return out


def get_persistent_volume_claim_names_from_pod(pod: Pod) -> list[str]:
    return [
        v.volumeSource.persistentVolumeClaim.claimName for v in pod.spec.volumes
        if v.volumeSource.HasField("persistentVolumeClaim")
    ]


@dataclass(frozen=True, slots=True)
class _StateData:
    pod_pv_topologies: tuple[PVTopology, ...]

    def clone(self) -> _StateData:
        return self


class VolumeZone(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def get_pv_by_pod(self, pod: Pod) -> list[PVTopology] | Status:
        client = self._handle.client()
        ns = pod.metadata.namespace
        topologies: list[PVTopology] = []
        for pvc_name in get_persistent_volume_claim_names_from_pod(pod):
            if not pvc_name:
                return Status.unresolvable("PersistentVolumeClaim had no name")
            pvc = client.get_object("PersistentVolumeClaim", f"{ns}/{pvc_name}")
            if pvc is None:
                return Status.unresolvable(pvc_not_found_message(pvc_name))
            pv_name = pvc.spec.volumeName
            if not pv_name:
                sc_name = get_persistent_volume_claim_class(pvc)
                if not sc_name:
                    return Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                sc = client.get_object("StorageClass", sc_name)
                if sc is None:
                    return Status.unresolvable(storage_class_not_found_message(sc_name))
                if not sc.HasField("volumeBindingMode"):
                    return Status.unresolvable(f'VolumeBindingMode not set for StorageClass "{sc_name}"')
                if sc.volumeBindingMode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
                    # Unbound: the volume binder picks or provisions a volume for the chosen node.
                    continue
                return Status.unresolvable("PersistentVolume had no name")
            pv = client.get_object("PersistentVolume", pv_name)
            if pv is None:
                return Status.unresolvable(pv_not_found_message(pv_name))
            topologies.extend(get_pv_topologies(pv))
        return topologies

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.spec.volumes:
            return None, Status.skip()
        topologies = self.get_pv_by_pod(pod)
        if isinstance(topologies, Status):
            return None, topologies
        if not topologies:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _StateData(tuple(topologies)))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        # Without volumes the pod always fits: skip the lookups.
        if not pod.spec.volumes:
            return None
        s = state.get(PRE_FILTER_STATE_KEY)
        topologies: Sequence[PVTopology]
        if isinstance(s, _StateData):
            topologies = s.pod_pv_topologies
        else:
            # As kube: without PreFilter's state the volumes are looked up here.
            computed = self.get_pv_by_pod(pod)
            if isinstance(computed, Status):
                return computed
            topologies = computed
        node = node_info.node
        labels = node.metadata.labels if node is not None else {}
        # A node without any topology label (a single-zone cluster) accepts every volume.
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None
        for t in topologies:
            v = labels.get(t.key)
            if v is None:
                # A PV's beta label matches the node's GA label.
                v = labels.get(translate_to_ga_label(t.key))
            if v is None or v not in t.values:
                return Status.unresolvable(ERR_REASON_CONFLICT)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # A new WaitForFirstConsumer class makes unbound claims of it acceptable. A class's
            # volumeBindingMode is immutable, so updates are not registered.
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD),
                self.is_schedulable_after_storage_class_added,
            ),
            # No hint: a new node or new zone labels on a node may fit the volumes.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            # A new claim, or a claim getting bound (spec.volumeName set).
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            # A new volume, or new topology labels on a volume.
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_persistent_volume_change,
            ),
        ]

    def is_schedulable_after_persistent_volume_claim_change(self, pod: Pod, old_obj: Any,
                                                            new_obj: Any) -> QueueingHint:
        typed = as_pair(PersistentVolumeClaim, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        pvc = typed[1]
        if pvc is None or pvc.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QUEUE_SKIP
        if pvc.metadata.name in get_persistent_volume_claim_names_from_pod(pod):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_storage_class_added(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        typed = as_update(StorageClass, None, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        sc = typed[1]
        if sc.HasField("volumeBindingMode") and sc.volumeBindingMode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_persistent_volume_change(self, pod: Pod, old_obj: Any,
                                                      new_obj: Any) -> QueueingHint:
        typed = as_update(PersistentVolume, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        old, new = typed
        if old is None:
            # A new volume.
            return QueueingHint.QUEUE
        if get_pv_topologies(old) != get_pv_topologies(new):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
