"""Emulated storage controllers for the embedded cluster: what kube-controller-manager's PV controller
(pkg/controller/volume/persistentvolume) and a CSI external-provisioner do with the writes the
VolumeBinding plugin makes in PreBind, so that `simulate` can bind pods that use PVCs.

- PV controller (binding only): a PV whose spec.claimRef names an unbound claim (the scheduler's
  pre-binding, or a provisioner's new PV) gets bound: the claim's spec.volumeName, its
  bind-completed / bound-by-controller annotations, and both objects' status phase Bound (the claim's
  status also takes the PV's capacity and access modes). A claim that names its PV (pre-bound by its
  author) is bound the same way. Immediate-mode claims are bound to a matching Available PV, as
  the controller's syncUnboundClaim does (FindMatchingVolume without a node).
- Provisioner (when `provision`): a claim annotated volume.kubernetes.io/selected-node whose
  StorageClass has a provisioner it serves gets a new PV "pvc-<claim uid>" with the claim's size,
  access modes and volume mode, the class's reclaim policy, a claimRef to the claim, and node affinity
  to the selected node's topology: for each topology key (the keys of the class's allowedTopologies,
  and those the node's CSINode lists for the driver) the node's value, as an external-provisioner
  records the accessible topology a CSI driver returns for the preferred (selected) node.
  Immediate-mode claims of such a class are provisioned too, without node affinity beyond the class's
  first allowed topology term. Capacity tracking objects (CSIStorageCapacity) are left as they are.

Work is queued by the watch callbacks and done once the write that caused it has been delivered to
every watcher (MemoryCluster.add_after_write_hook), so that the scheduler's informers see each
object's changes in order, as they would from an API server.
"""

from __future__ import annotations

from collections.abc import Collection

from wasmsched.api.resources import RESOURCE_STORAGE
from wasmsched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    CLAIM_BOUND,
    NOT_SUPPORTED_PROVISIONER,
    VOLUME_AVAILABLE,
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    VOLUME_BOUND,
    find_matching_volume,
    get_persistent_volume_claim_class,
    is_volume_bound_to_claim,
)
from wasmsched.api.types import PersistentVolume, PersistentVolumeClaim, object_key
from wasmsched.embedded.memory import MemoryCluster

KIND_PV = "PersistentVolume"
KIND_PVC = "PersistentVolumeClaim"


class VolumeControllers:
    """The PV controller's binding and an external provisioner, driven by the cluster's watches."""

    def __init__(self, cluster: MemoryCluster, provision: bool, provisioners: Collection[str] | None = None) -> None:
        self.cluster = cluster
        self.provision = provision
        # None: every provisioner a class may name (but kubernetes.io/no-provisioner).
        self.provisioners = None if provisioners is None else frozenset(provisioners)
        self._pending: list[str] = []  # claim keys to sync, in order, without duplicates

    # ----- wiring -----------------------------------------------------------------------------------

    def attach(self) -> None:
        self.cluster.watch(KIND_PVC, on_add=self._claim_changed, on_update=lambda _old, new: self._claim_changed(new))
        self.cluster.watch(KIND_PV, on_add=self._volume_changed, on_update=lambda _old, new: self._volume_changed(new))
        self.cluster.add_after_write_hook(self.drain)
        self.drain()

    def _queue(self, key: str) -> None:
        if key not in self._pending:
            self._pending.append(key)

    def _claim_changed(self, pvc: PersistentVolumeClaim) -> None:
        self._queue(object_key(pvc))

    def _volume_changed(self, pv: PersistentVolume) -> None:
        if pv.spec.HasField("claimRef") and pv.spec.claimRef.name:
            self._queue(f"{pv.spec.claimRef.namespace}/{pv.spec.claimRef.name}")

    def drain(self) -> None:
        """Syncs every queued claim; writes made here queue further work, done in the same call."""
        while self._pending:
            key = self._pending.pop(0)
            pvc = self.cluster.get(KIND_PVC, key)
            if pvc is not None:
                self.sync_claim(pvc)

    # ----- PV controller ----------------------------------------------------------------------------

    def sync_claim(self, pvc: PersistentVolumeClaim) -> None:
        if pvc.spec.volumeName:
            pv = self.cluster.get(KIND_PV, pvc.spec.volumeName)
            if pv is None or (pv.spec.HasField("claimRef") and not is_volume_bound_to_claim(pv, pvc)):
                return  # the PV does not exist (yet) or belongs to another claim
            self._bind(pv, pvc)
            return
        pv = self._volume_for_claim(pvc)
        if pv is not None:
            self._bind(pv, pvc)
            return
        if self.provision:
            self._maybe_provision(pvc)

    def _delay_binding(self, pvc: PersistentVolumeClaim) -> bool:
        cls = self.cluster.get("StorageClass", get_persistent_volume_claim_class(pvc))
        return cls is not None and cls.volumeBindingMode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER

    def _volume_for_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolume | None:
        """A PV pre-bound to the claim; for an Immediate claim also the best Available match."""
        volumes = self.cluster.list(KIND_PV)
        try:
            return find_matching_volume(pvc, volumes, None, {}, self._delay_binding(pvc))
        except ValueError:
            return None

    def _bind(self, pv: PersistentVolume, pvc: PersistentVolumeClaim) -> None:
        """bindVolumeToClaim + bindClaimToVolume + the status updates, each written only if it changes."""
        new_pv = PersistentVolume()
        new_pv.CopyFrom(pv)
        ref = new_pv.spec.claimRef
        if not is_volume_bound_to_claim(pv, pvc) or ref.uid != pvc.metadata.uid:
            if not pv.spec.HasField("claimRef"):
                new_pv.metadata.annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
            ref.kind, ref.apiVersion = "PersistentVolumeClaim", "v1"
            ref.namespace, ref.name, ref.uid = pvc.metadata.namespace, pvc.metadata.name, pvc.metadata.uid
            ref.resourceVersion = pvc.metadata.resourceVersion
        new_pv.status.phase = VOLUME_BOUND
        if new_pv != pv:
            self.cluster.update(new_pv)

        cur = self.cluster.get(KIND_PVC, object_key(pvc))
        if cur is None:
            return
        new_pvc = PersistentVolumeClaim()
        new_pvc.CopyFrom(cur)
        if new_pvc.spec.volumeName != pv.metadata.name:
            new_pvc.spec.volumeName = pv.metadata.name
            new_pvc.metadata.annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        new_pvc.metadata.annotations[ANN_BIND_COMPLETED] = "yes"
        new_pvc.status.phase = CLAIM_BOUND
        del new_pvc.status.accessModes[:]
        new_pvc.status.accessModes.extend(pv.spec.accessModes)
        new_pvc.status.capacity.clear()
        for name, q in pv.spec.capacity.items():
            new_pvc.status.capacity[name].CopyFrom(q)
        if new_pvc != cur:
            self.cluster.update(new_pvc)

    # ----- external provisioner ---------------------------------------------------------------------

    def _serves(self, provisioner: str) -> bool:
        if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
            return False
        return self.provisioners is None or provisioner in self.provisioners

    def _maybe_provision(self, pvc: PersistentVolumeClaim) -> None:
        cls = self.cluster.get("StorageClass", get_persistent_volume_claim_class(pvc))
        if cls is None or not self._serves(cls.provisioner):
            return
        delay = cls.volumeBindingMode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER
        selected = pvc.metadata.annotations.get(ANN_SELECTED_NODE)
        if delay and selected is None:
            return  # waits for the scheduler to pick a node
        name = f"pvc-{pvc.metadata.uid}" if pvc.metadata.uid else f"pvc-{pvc.metadata.namespace}-{pvc.metadata.name}"
        if self.cluster.get(KIND_PV, name) is not None:
            return
        pv = PersistentVolume()
        pv.metadata.name = name
        pv.metadata.annotations[ANN_DYNAMICALLY_PROVISIONED] = cls.provisioner
        pv.spec.storageClassName = cls.metadata.name
        pv.spec.persistentVolumeReclaimPolicy = cls.reclaimPolicy if cls.HasField("reclaimPolicy") else "Delete"
        pv.spec.accessModes.extend(pvc.spec.accessModes)
        if pvc.spec.HasField("volumeMode"):
            pv.spec.volumeMode = pvc.spec.volumeMode
        request = pvc.spec.resources.requests.get(RESOURCE_STORAGE)
        if request is not None:
            pv.spec.capacity[RESOURCE_STORAGE].CopyFrom(request)
        pv.spec.mountOptions.extend(cls.mountOptions)
        pv.spec.persistentVolumeSource.csi.driver = cls.provisioner
        pv.spec.persistentVolumeSource.csi.volumeHandle = name
        segment = self._topology(cls, selected)
        if segment:
            term = pv.spec.nodeAffinity.required.nodeSelectorTerms.add()
            for key, value in segment.items():
                req = term.matchExpressions.add()
                req.key, req.operator = key, "In"
                req.values.append(value)
        ref = pv.spec.claimRef
        ref.kind, ref.apiVersion = "PersistentVolumeClaim", "v1"
        ref.namespace, ref.name, ref.uid = pvc.metadata.namespace, pvc.metadata.name, pvc.metadata.uid
        ref.resourceVersion = pvc.metadata.resourceVersion
        pv.status.phase = VOLUME_AVAILABLE
        # The new PV's watch event queues the claim, which the PV controller then binds to it.
        self.cluster.create(pv)

    def _topology(self, cls: object, selected: str | None) -> dict[str, str]:
        """The accessible topology segment of the new volume: the selected node's values of the
        topology keys, or (no node) the first allowed topology term's first values."""
        allowed = list(cls.allowedTopologies)  # type: ignore[attr-defined]
        provisioner: str = cls.provisioner  # type: ignore[attr-defined]
        if selected is None:
            if not allowed:
                return {}
            return {e.key: e.values[0] for e in allowed[0].matchLabelExpressions if e.values}
        node = self.cluster.get("Node", selected)
        if node is None:
            return {}
        keys: list[str] = [e.key for t in allowed for e in t.matchLabelExpressions]
        csinode = self.cluster.get("CSINode", selected)
        if csinode is not None:
            for d in csinode.spec.drivers:
                if d.name == provisioner:
                    keys.extend(d.topologyKeys)
        labels = node.metadata.labels
        return {k: labels[k] for k in dict.fromkeys(keys) if k in labels}


def attach_volume_controllers(cluster: MemoryCluster, provision: bool,
                              provisioners: Collection[str] | None = None) -> None:
    """Runs the emulated PV controller (binding) and, when `provision`, an external provisioner for
    every StorageClass provisioner (or only those in `provisioners`) on `cluster`. Attach before or
    after the scheduler's informers: the controllers write only after each triggering write was
    delivered to every watcher."""
    VolumeControllers(cluster, provision, provisioners).attach()
