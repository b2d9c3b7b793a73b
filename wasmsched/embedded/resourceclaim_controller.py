"""kube-controller-manager's resourceclaim controller (pkg/controller/resourceclaim/controller.go),
emulated on a MemoryCluster for `simulate`, which runs no controller manager.

- A pod's spec.resourceClaims entry with resourceClaimTemplateName gets a ResourceClaim generated
  from the template, named "<pod>-<claim>-<5 random characters>" (both parts truncated
  proportionally past 57 characters, as the controller does), controlled by the pod and annotated
  with resource.kubernetes.io/pod-claim-name; the pod's status.resourceClaimStatuses then maps the
  entry to that name. An orphaned claim already generated for the entry is reused.
- When a pod is deleted or has terminated, it is removed from the status.reservedFor of its claims;
  a claim left reserved for nobody is deallocated, and claims generated for a deleted pod are
  deleted (the garbage collector's part).
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from wasmsched.api.types import Pod, ResourceClaim
from wasmsched.embedded.memory import MemoryCluster

POD_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
# k8s.io/apiserver's names.SimpleNameGenerator alphabet (no vowels, no confusable digits).
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_MAX_BASE_LEN = 57


def _generate_name(rng: random.Random, pod_name: str, claim_name: str) -> str:
    base = pod_name + "-" + claim_name + "-"
    if len(base) > _MAX_BASE_LEN:
        n = len(base)
        base = pod_name[: len(pod_name) * _MAX_BASE_LEN // n] + "-" + claim_name[: len(claim_name) * _MAX_BASE_LEN // n]
    return base + "".join(rng.choice(_ALPHANUMS) for _ in range(5))


def _owned_by(claim: ResourceClaim, pod: Pod) -> bool:
    return any(
        r.HasField("controller") and r.controller and r.uid == pod.metadata.uid for r in claim.metadata.ownerReferences
    )


def _pod_done(pod: Pod) -> bool:
    return pod.status.phase in ("Succeeded", "Failed")


class _Controller:
    def __init__(self, cluster: MemoryCluster, rng: random.Random) -> None:
        self.cluster = cluster
        self.rng = rng
        self._pending: list[tuple[Pod, bool]] = []

    def _find_claim(self, pod: Pod, pod_claim_name: str) -> ResourceClaim | None:
        for claim in self.cluster.list("ResourceClaim"):
            if claim.metadata.namespace != pod.metadata.namespace or not _owned_by(claim, pod):
                continue
            if claim.metadata.annotations.get(POD_RESOURCE_CLAIM_ANNOTATION) == pod_claim_name:
                return claim  # type: ignore[no-any-return]
        return None

    def sync_pod(self, pod: Pod) -> None:
        if pod.metadata.HasField("deletionTimestamp") or _pod_done(pod):
            self._release(pod, deleted=False)
            return
        known = {s.name for s in pod.status.resourceClaimStatuses}
        new: dict[str, str] = {}
        for pod_claim in pod.spec.resourceClaims:
            if not pod_claim.HasField("resourceClaimTemplateName") or pod_claim.name in known:
                continue
            claim = self._find_claim(pod, pod_claim.name)
            if claim is None:
                template = self.cluster.get(
                    "ResourceClaimTemplate", f"{pod.metadata.namespace}/{pod_claim.resourceClaimTemplateName}"
                )
                if template is None:
                    # The controller retries until the template exists: done on the next pod event.
                    continue
                claim = ResourceClaim()
                claim.metadata.name = _generate_name(self.rng, pod.metadata.name, pod_claim.name)
                claim.metadata.namespace = pod.metadata.namespace
                claim.metadata.uid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
                ref = claim.metadata.ownerReferences.add()
                ref.apiVersion, ref.kind, ref.name, ref.uid, ref.controller = (
                    "v1",
                    "Pod",
                    pod.metadata.name,
                    pod.metadata.uid,
                    True,
                )
                for k, v in template.spec.metadata.annotations.items():
                    claim.metadata.annotations[k] = v
                claim.metadata.annotations[POD_RESOURCE_CLAIM_ANNOTATION] = pod_claim.name
                for k, v in template.spec.metadata.labels.items():
                    claim.metadata.labels[k] = v
                claim.spec.CopyFrom(template.spec.spec)
                self.cluster.create(claim)
            new[pod_claim.name] = claim.metadata.name
        if not new:
            return
        current = self.cluster.get("Pod", f"{pod.metadata.namespace}/{pod.metadata.name}")
        if current is None or current.metadata.uid != pod.metadata.uid:
            return
        updated = Pod()
        updated.CopyFrom(current)
        for pod_claim in updated.spec.resourceClaims:
            if pod_claim.name in new:
                s = updated.status.resourceClaimStatuses.add()
                s.name = pod_claim.name
                s.resourceClaimName = new[pod_claim.name]
        self.cluster.update(updated)

    def _release(self, pod: Pod, deleted: bool) -> None:
        for claim in self.cluster.list("ResourceClaim"):
            if claim.metadata.namespace != pod.metadata.namespace:
                continue
            if deleted and _owned_by(claim, pod):
                self.cluster.delete("ResourceClaim", f"{claim.metadata.namespace}/{claim.metadata.name}")
                continue
            if not any(r.uid == pod.metadata.uid for r in claim.status.reservedFor):
                continue
            c = ResourceClaim()
            c.CopyFrom(claim)
            keep = [r for r in c.status.reservedFor if r.uid != pod.metadata.uid]
            del c.status.reservedFor[:]
            c.status.reservedFor.extend(keep)
            if not keep:
                # Reserved for nobody any more: the controller deallocates (structured parameters).
                c.status.ClearField("allocation")
                c.status.ClearField("devices")
                c.metadata.finalizers[:] = [
                    f for f in c.metadata.finalizers if f != "resource.kubernetes.io/delete-protection"
                ]
            self.cluster.update(c)

    # Watch callbacks only queue: the writes happen once the triggering write reached every watcher
    # (MemoryCluster.add_after_write_hook), so the scheduler sees a pod's creation before its status update.

    def on_add(self, obj: Any) -> None:
        if obj.spec.resourceClaims:
            self._pending.append((obj, False))

    def on_update(self, old: Any, new: Any) -> None:
        if new.spec.resourceClaims:
            self._pending.append((new, False))

    def on_delete(self, obj: Any) -> None:
        if obj.spec.resourceClaims:
            self._pending.append((obj, True))

    def drain(self) -> None:
        while self._pending:
            pod, deleted = self._pending.pop(0)
            if deleted:
                self._release(pod, deleted=True)
                continue
            current = self.cluster.get("Pod", f"{pod.metadata.namespace}/{pod.metadata.name}")
            if current is not None and current.metadata.uid == pod.metadata.uid:
                self.sync_pod(current)


def attach_resourceclaim_controller(cluster: MemoryCluster, rng: random.Random | None = None) -> None:
    """Runs the emulated resourceclaim controller on every pod event of `cluster` from now on (and
    on the pods it already has). `rng` draws the claims' name suffixes (seeded: the same run names
    them the same)."""
    c = _Controller(cluster, rng or random.Random(0))
    cluster.watch("Pod", on_add=c.on_add, on_update=c.on_update, on_delete=c.on_delete)
    cluster.add_after_write_hook(c.drain)
    c.drain()
