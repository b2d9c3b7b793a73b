"""KubeApi against a real kube-apiserver: its refusals arrive as ApiErrors whose code, reason and details
are the server's (from a JSON or a protobuf Status), so kube's predicates judge them as client-go's do;
and the embedded cluster refuses the same writes with the same code and reason."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api import errors
from wasmsched.api.errors import ApiError
from wasmsched.api.types import PodDisruptionBudget
from wasmsched.devcluster import DevCluster
from wasmsched.embedded.memory import MemoryCluster
from wasmsched.kube import codec
from wasmsched.kube.api import KubeApi
from wasmsched.kube.client_cluster import pod_is_gone


def _pdb(name: str, resource_version: str = "", min_available: int = 1) -> dict[str, Any]:
    meta = {"name": name, **({"resourceVersion": resource_version} if resource_version else {})}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta,
            "spec": {"minAvailable": min_available}}


def _refusal(api: KubeApi, method: str, path: str, body: Any = None, accept: str = codec.JSON) -> ApiError:
    with pytest.raises(ApiError) as e:
        api.request(method, path, body=body, accept=accept)
    return e.value


def test_the_servers_refusals_are_what_kubes_predicates_say(dev_cluster: DevCluster, namespace: str) -> None:
    pdbs = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"
    with dev_cluster.kube_api() as api:
        created = api.request_json("POST", pdbs, body=_pdb("b"))
        for accept in (codec.JSON, codec.ACCEPT):  # a JSON Status, and a protobuf one
            missing = _refusal(api, "GET", f"{pdbs}/nope", accept=accept)
            assert (missing.status, missing.reason) == (404, "NotFound") and errors.is_not_found(missing)
            assert missing.details is not None and missing.details.name == "nope"
            assert missing.details.kind == "poddisruptionbudgets" and missing.details.group == "policy"
        exists = _refusal(api, "POST", pdbs, _pdb("b"))
        assert (exists.status, exists.reason) == (409, "AlreadyExists")
        assert errors.is_already_exists(exists) and not errors.is_conflict(exists)
        api.request_json("PUT", f"{pdbs}/b", body=_pdb("b", created["metadata"]["resourceVersion"], 2))
        stale = _refusal(api, "PUT", f"{pdbs}/b", _pdb("b", created["metadata"]["resourceVersion"]))
        assert (stale.status, stale.reason) == (409, "Conflict")
        assert errors.is_conflict(stale) and not errors.is_already_exists(stale)
        bad = _pdb("c")
        bad["spec"]["maxUnavailable"] = 1  # with minAvailable: refused by validation
        invalid = _refusal(api, "POST", pdbs, bad)
        assert (invalid.status, invalid.reason) == (422, "Invalid") and errors.is_invalid(invalid)
        assert invalid.details is not None and invalid.details.name == "c"
        assert [c.field for c in invalid.details.causes] == ["spec"]
        # a UID precondition on a delete (as preemption sends for its victims): a Conflict, not NotFound,
        # which KubeCluster takes for a victim that is another object now
        precondition = _refusal(api, "DELETE", f"{pdbs}/b", {"apiVersion": "v1", "kind": "DeleteOptions",
                                                             "preconditions": {"uid": "not-its-uid"}})
        assert errors.is_conflict(precondition) and not errors.is_not_found(precondition)
        assert pod_is_gone(precondition)
        assert not pod_is_gone(stale)  # a stale resourceVersion is only a conflict


def test_the_embedded_cluster_refuses_the_same_writes_alike(dev_cluster: DevCluster, namespace: str) -> None:
    pdbs = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"
    cluster = MemoryCluster()
    pdb = PodDisruptionBudget()
    pdb.metadata.name, pdb.metadata.namespace = "b", namespace
    stored = cluster.create(pdb)
    dup = PodDisruptionBudget()
    dup.CopyFrom(pdb)
    with pytest.raises(ApiError) as embedded_exists:
        cluster.create(dup)
    stale = PodDisruptionBudget()
    stale.CopyFrom(stored)
    cluster.update_object(stored)
    with pytest.raises(ApiError) as embedded_stale:
        cluster.update_object(stale)
    with dev_cluster.kube_api() as api:
        created = api.request_json("POST", pdbs, body=_pdb("b"))
        server_exists = _refusal(api, "POST", pdbs, _pdb("b"))
        api.request_json("PUT", f"{pdbs}/b", body=_pdb("b", created["metadata"]["resourceVersion"], 2))
        server_stale = _refusal(api, "PUT", f"{pdbs}/b", _pdb("b", created["metadata"]["resourceVersion"]))
    for embedded, server in ((embedded_exists.value, server_exists), (embedded_stale.value, server_stale)):
        assert (embedded.status, embedded.reason) == (server.status, server.reason)
