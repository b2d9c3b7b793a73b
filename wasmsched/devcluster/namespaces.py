"""Namespaces that can be deleted without the namespace controller, which a dev cluster does not run,
so a deleted namespace would stay Terminating with its objects. `purge_namespace` does that controller's
job: it deletes every namespaced collection (found by discovery) and then clears the finalizer."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from wasmsched.devcluster.rest import request_json


class NamespaceError(Exception):
    pass


def create_namespace(api: client.ApiClient, name: str, labels: dict[str, str] | None = None) -> None:
    client.CoreV1Api(api).create_namespace(
        body=client.V1Namespace(metadata=client.V1ObjectMeta(name=name, labels=labels)))


def _group_versions(api: client.ApiClient) -> list[str]:
    paths = ["/api/v1"]
    status, groups = request_json(api, "GET", "/apis")
    if status != 200:
        raise NamespaceError(f"GET /apis: HTTP {status}: {groups}")
    paths.extend(f"/apis/{g['preferredVersion']['groupVersion']}" for g in groups.get("groups", []))
    return paths


def _namespaced_collections(api: client.ApiClient) -> list[str]:
    out: list[str] = []
    for gv in _group_versions(api):
        status, doc = request_json(api, "GET", gv)
        if status != 200:
            continue  # an aggregated API that is down has nothing of ours
        out.extend(f"{gv}/namespaces/{{namespace}}/{r['name']}" for r in doc.get("resources", [])
                   if r.get("namespaced") and "/" not in r["name"] and "deletecollection" in r.get("verbs", []))
    return out


def purge_namespace(api: client.ApiClient, name: str) -> None:
    """Deletes everything in the namespace at once (grace period 0: pods too, bound or not), then the
    namespace itself, finalized so it is gone rather than Terminating."""
    # Grace period 0 deletes a pod immediately; Background lets owners go without waiting for dependents.
    options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                               "propagationPolicy": "Background"}
    for path in _namespaced_collections(api):
        status, body = request_json(api, "DELETE", path.format(namespace=name), body=options)
        if status not in (200, 404, 405):
            raise NamespaceError(f"DELETE {path.format(namespace=name)}: HTTP {status}: {body}")
    status, body = request_json(api, "DELETE", f"/api/v1/namespaces/{name}", body=options)
    if status == 404:
        return
    if status not in (200, 202):
        raise NamespaceError(f"DELETE namespace {name}: HTTP {status}: {body}")
    status, ns = request_json(api, "GET", f"/api/v1/namespaces/{name}")
    if status == 404:
        return
    ns.setdefault("spec", {})["finalizers"] = []
    status, body = request_json(api, "PUT", f"/api/v1/namespaces/{name}/finalize", body=ns)
    if status not in (200, 404):
        raise NamespaceError(f"PUT namespace {name} finalize: HTTP {status}: {body}")
