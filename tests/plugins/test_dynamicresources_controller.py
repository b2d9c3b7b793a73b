"""The emulated resourceclaim controller (embedded/resourceclaim_controller.py) on a MemoryCluster."""

from __future__ import annotations

from wasmsched.api.types import Pod, ResourceClaim, ResourceClaimTemplate
from wasmsched.embedded.memory import MemoryCluster
from wasmsched.embedded.resourceclaim_controller import (
    POD_RESOURCE_CLAIM_ANNOTATION,
    attach_resourceclaim_controller,
)
from wasmsched.testing.builders import PodWrapper


def _template() -> ResourceClaimTemplate:
    t = ResourceClaimTemplate()
    t.metadata.name = "gpu-template"
    t.metadata.namespace = "default"
    t.spec.metadata.labels["app"] = "x"
    r = t.spec.spec.devices.requests.add()
    r.name = "gpu"
    r.exactly.deviceClassName = "gpu.example.com"
    return t


def _pod() -> Pod:
    p = PodWrapper("my-pod", "default").uid("pod-uid").obj()
    c = p.spec.resourceClaims.add()
    c.name = "gpu-claim"
    c.resourceClaimTemplateName = "gpu-template"
    return p


def test_generates_claim_and_pod_status() -> None:
    cluster = MemoryCluster()
    cluster.create(_template())
    attach_resourceclaim_controller(cluster)
    cluster.create(_pod())
    claims = cluster.list("ResourceClaim")
    assert len(claims) == 1
    claim: ResourceClaim = claims[0]
    assert (
        claim.metadata.name.startswith("my-pod-gpu-claim-") and len(claim.metadata.name) == len("my-pod-gpu-claim-") + 5
    )
    assert claim.metadata.annotations[POD_RESOURCE_CLAIM_ANNOTATION] == "gpu-claim"
    assert claim.metadata.labels["app"] == "x"
    ref = claim.metadata.ownerReferences[0]
    assert (ref.kind, ref.name, ref.uid, ref.controller) == ("Pod", "my-pod", "pod-uid", True)
    assert claim.spec.devices.requests[0].exactly.deviceClassName == "gpu.example.com"
    pod = cluster.get("Pod", "default/my-pod")
    assert pod is not None
    assert [(s.name, s.resourceClaimName) for s in pod.status.resourceClaimStatuses] == [
        ("gpu-claim", claim.metadata.name)
    ]


def test_waits_for_template_then_deletes_with_pod() -> None:
    cluster = MemoryCluster()
    attach_resourceclaim_controller(cluster)
    cluster.create(_pod())
    assert cluster.list("ResourceClaim") == []
    cluster.create(_template())
    pod = Pod()
    stored = cluster.get("Pod", "default/my-pod")
    assert stored is not None
    pod.CopyFrom(stored)
    pod.metadata.labels["touch"] = "1"
    cluster.update(pod)
    assert len(cluster.list("ResourceClaim")) == 1
    cluster.delete("Pod", "default/my-pod")
    assert cluster.list("ResourceClaim") == []
