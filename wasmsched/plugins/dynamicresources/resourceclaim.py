"""ResourceClaim helpers (dynamic-resource-allocation/resourceclaim/resourceclaim.go), pod-scoped:
PodGroup claims (DRAWorkloadResourceClaims, off by default in 1.37) are not supported."""

from __future__ import annotations

from typing import Any

from wasmsched.api.types import Pod, ResourceClaim

FINALIZER = "resource.kubernetes.io/delete-protection"


class ClaimNameError(Exception):
    pass


def name(pod: Pod, pod_claim: Any) -> tuple[str | None, bool]:
    """resourceclaim.Name: (claim name or None, must check owner); raises ClaimNameError."""
    if pod_claim.HasField("resourceClaimName"):
        return pod_claim.resourceClaimName, False
    if pod_claim.HasField("resourceClaimTemplateName"):
        for status in pod.status.resourceClaimStatuses:
            if status.name == pod_claim.name:
                return (status.resourceClaimName if status.HasField("resourceClaimName") else None), True
        raise ClaimNameError(f'pod "{pod.metadata.namespace}/{pod.metadata.name}": ResourceClaim not created yet')
    raise ClaimNameError(
        f'pod "{pod.metadata.namespace}/{pod.metadata.name}", spec.resourceClaim "{pod_claim.name}": '
        "none of the supported fields are set"
    )


def is_controlled_by(obj: Any, owner: Any) -> bool:
    for ref in obj.metadata.ownerReferences:
        if ref.HasField("controller") and ref.controller:
            return bool(ref.uid == owner.metadata.uid)
    return False


def is_for_pod(pod: Pod, claim: ResourceClaim) -> str | None:
    """resourceclaim.IsForPod: an error message, or None."""
    c, p = claim.metadata, pod.metadata
    if c.namespace != p.namespace:
        return f"ResourceClaim {c.namespace}/{c.name} is not in the same namespace as Pod {p.namespace}/{p.name}"
    if not is_controlled_by(claim, pod):
        return f"ResourceClaim {c.namespace}/{c.name} was not created for Pod {p.namespace}/{p.name} (Pod is not owner)"
    return None


def is_reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    return any(r.uid == pod.metadata.uid for r in claim.status.reservedFor)


def can_be_reserved(claim: ResourceClaim) -> bool:
    # kube 1.37: the limit on reservedFor entries is enforced by the apiserver, not here.
    return True


def is_sub_request_ref(ref: str) -> bool:
    return len(ref.split("/")) == 2


def create_sub_request_ref(request: str, sub_request: str) -> str:
    return f"{request}/{sub_request}"
