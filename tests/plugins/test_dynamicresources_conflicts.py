"""DynamicResources' PreBind retries a claim write that conflicts (retry.RetryOnConflict: is_conflict),
reading the claim again, whichever cluster answered: the embedded cluster's ConflictError for a stale
resourceVersion, or a real API server's 409 Conflict as KubeApi raises it (here a UID precondition, whose
message says nothing of a modified object). Any other error ends PreBind with an Error status, whatever
its message says."""

from __future__ import annotations

import builtins
import json
from collections import defaultdict
from typing import Any, cast

from wasmsched.api.types import ResourceClaim
from wasmsched.embedded.memory import MemoryCluster
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.kube.api import _status_error
from wasmsched.kube.client_cluster import KubeCluster
from wasmsched.kube.codec import decode_json
from wasmsched.plugins.dynamicresources import DynamicResources
from wasmsched.testing.builders import NodeWrapper
from wasmsched.testing.fake_handle import FakeHandle

from .test_dynamicresources import CLAIM_NAME, NODE, NS, POD_UID, allocated_claim, device_class, pod_with_claim_template

KEY = f"{NS}/{CLAIM_NAME}"


def _pre_bind(client: Any) -> Status | None:
    node = NodeWrapper(NODE).obj()
    pl = DynamicResources(FakeHandle(nodes=[node], client=cast(Any, client)))
    pod = pod_with_claim_template(True)
    cs = CycleState()
    assert pl.pre_filter(cs, pod, [NodeInfo(node)])[1] is None
    assert pl.filter(cs, pod, NodeInfo(node)) is None
    assert pl.reserve(cs, pod, NODE) is None
    return pl.pre_bind(cs, pod, NODE)


class ConflictingMemoryCluster(MemoryCluster):
    """Another writer labels the claim just before PreBind's first write of it, which is then stale."""

    def __init__(self) -> None:
        super().__init__()
        self.claim_writes: list[str] = []  # the resourceVersion each write of the claim carried

    def update_object(self, obj: Any, subresource: str = "") -> Any:
        if isinstance(obj, ResourceClaim):
            if not self.claim_writes:
                other = ResourceClaim()
                other.CopyFrom(self._claim())
                other.metadata.labels["other-writer"] = "was-here"
                super().update_object(other)
            self.claim_writes.append(obj.metadata.resourceVersion)
        return super().update_object(obj, subresource)

    def _claim(self) -> ResourceClaim:
        claim = self.get_object("ResourceClaim", KEY)
        assert isinstance(claim, ResourceClaim)
        return claim


def test_prebind_retries_the_embedded_clusters_conflict_on_the_claim_read_again() -> None:
    cluster = ConflictingMemoryCluster()
    cluster.create(allocated_claim())
    cluster.create(device_class())
    assert _pre_bind(cluster) is None
    claim = cluster._claim()
    assert [r.uid for r in claim.status.reservedFor] == [POD_UID]
    assert claim.metadata.labels["other-writer"] == "was-here"  # the retry wrote on the claim read again
    first, second = cluster.claim_writes
    assert int(second) > int(first)


class _Store:
    def __init__(self) -> None:
        self.objects: dict[str, Any] = {}

    def get(self, key: str) -> Any:
        return self.objects.get(key)

    def list(self) -> builtins.list[Any]:
        return builtins.list(self.objects.values())

    def list_namespace(self, namespace: str) -> builtins.list[Any]:
        return [o for o in self.objects.values() if o.metadata.namespace == namespace]


class _Informers:
    def __init__(self) -> None:
        self.stores: defaultdict[str, _Store] = defaultdict(_Store)

    def informer(self, kind: str) -> _Store:
        return self.stores[kind]


class FakeServer:
    """KubeApi's `request` for KubeCluster's PUTs: answers each with the next of `replies` (a JSON Status
    body and its code, which becomes the ApiError KubeApi raises), then stores the object."""

    def __init__(self, informers: _Informers, replies: list[tuple[int, dict[str, Any]]]) -> None:
        self.informers = informers
        self.replies = replies
        self.puts: list[str] = []

    def request(self, method: str, path: str, *, body: Any = None, **_: Any) -> tuple[bytes, str]:
        assert method == "PUT"
        self.puts.append(path)
        if self.replies:
            code, status = self.replies.pop(0)
            raise _status_error(code, "", json.dumps(status).encode(), "application/json", method, path)
        stored = self.informers.informer("ResourceClaim").get(KEY)
        body["metadata"]["resourceVersion"] = str(int(stored.metadata.resourceVersion) + 1)
        self.informers.informer("ResourceClaim").objects[KEY] = decode_json(body, ResourceClaim)
        return json.dumps(body).encode(), "application/json"


def _kube_cluster(replies: list[tuple[int, dict[str, Any]]]) -> tuple[KubeCluster, FakeServer]:
    informers = _Informers()
    claim, cls = allocated_claim(), device_class()
    informers.informer("ResourceClaim").objects[KEY] = claim
    informers.informer("DeviceClass").objects[cls.metadata.name] = cls
    server = FakeServer(informers, replies)
    return KubeCluster(cast(Any, server), cast(Any, informers), cast(Any, None)), server


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
            "message": message, "details": {"name": CLAIM_NAME, "group": "resource.k8s.io", "kind": "resourceclaims"}}


def test_prebind_retries_the_api_servers_conflict() -> None:
    precondition = _status(409, "Conflict", f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io '
                                            f'"{CLAIM_NAME}": Precondition failed: UID in precondition: a, UID in '
                                            "object meta: b")
    cluster, server = _kube_cluster([(409, precondition)])
    assert _pre_bind(cluster) is None
    assert len(server.puts) == 2
    claim = cluster.get_object("ResourceClaim", KEY)
    assert isinstance(claim, ResourceClaim)
    assert [r.uid for r in claim.status.reservedFor] == [POD_UID]


def test_prebind_does_not_retry_an_error_that_is_no_conflict_whatever_its_message() -> None:
    internal = _status(500, "InternalError", "Internal error occurred: the object has been modified; please apply "
                                             "your changes to the latest version and try again")
    cluster, server = _kube_cluster([(500, internal)])
    st = _pre_bind(cluster)
    assert st is not None and st.code == Code.ERROR
    assert "Internal error occurred" in st.message()
    assert len(server.puts) == 1
