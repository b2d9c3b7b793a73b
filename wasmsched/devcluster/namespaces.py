"""Namespaces that can be deleted without the namespace controller, which a dev cluster does not run,
so a deleted namespace would stay Terminating with its objects. `purge_namespace` does that controller's
job: it deletes every namespaced collection (found by discovery) and then clears the finalizer."""

from __future__ import annotations

from typing import Any

from wasmsched.api.errors import ApiError, is_method_not_supported, is_not_found
from wasmsched.kube.api import KubeApi


class NamespaceError(Exception):
    pass


def create_namespace(api: KubeApi, name: str, labels: dict[str, str] | None = None) -> None:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    api.request_json("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace", "metadata": meta})


def _group_versions(api: KubeApi) -> list[str]:
    paths = ["/api/v1"]
    try:
        groups = api.request_json("GET", "/apis")
    except ApiError as e:
        raise NamespaceError(f"GET /apis: HTTP {e.status}: {e}") from e
    paths.extend(f"/apis/{g['preferredVersion']['groupVersion']}" for g in groups.get("groups", []))
    return paths


def _namespaced_collections(api: KubeApi) -> list[str]:
    out: list[str] = []
    for gv in _group_versions(api):
        try:
            doc = api.request_json("GET", gv)
        except ApiError:
            continue  # an aggregated API that is down has nothing of ours
        out.extend(f"{gv}/namespaces/{{namespace}}/{r['name']}" for r in doc.get("resources", [])
                   if r.get("namespaced") and "/" not in r["name"] and "deletecollection" in r.get("verbs", []))
    return out


def purge_namespace(api: KubeApi, name: str) -> None:
    """Deletes everything in the namespace at once (grace period 0: pods too, bound or not), then the
    namespace itself, finalized so it is gone rather than Terminating."""
    # Grace period 0 deletes a pod immediately; Background lets owners go without waiting for dependents.
    options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                               "propagationPolicy": "Background"}
    for path in _namespaced_collections(api):
        try:
            api.request_json("DELETE", path.format(namespace=name), body=options)
        except ApiError as e:
            if not (is_not_found(e) or is_method_not_supported(e)):
                raise NamespaceError(f"DELETE {path.format(namespace=name)}: HTTP {e.status}: {e}") from e
    for method in ("DELETE", "GET"):
        try:
            ns = api.request_json(method, f"/api/v1/namespaces/{name}", body=options if method == "DELETE" else None)
        except ApiError as e:
            if is_not_found(e):
                return
            raise NamespaceError(f"{method} namespace {name}: HTTP {e.status}: {e}") from e
    ns.setdefault("spec", {})["finalizers"] = []
    try:
        api.request_json("PUT", f"/api/v1/namespaces/{name}/finalize", body=ns)
    except ApiError as e:
        if not is_not_found(e):
            raise NamespaceError(f"PUT namespace {name} finalize: HTTP {e.status}: {e}") from e
