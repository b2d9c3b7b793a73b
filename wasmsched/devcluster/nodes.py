"""KWOK-managed Nodes: what a real node of a mid-sized cloud machine reports, minus the kubelet."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from wasmsched.devcluster.components import KWOK_NODE_ANNOTATION, KWOK_NODE_ANNOTATION_VALUE
from wasmsched.kube.api import KubeApi

DEFAULT_CPU = "32"
DEFAULT_MEMORY = "256Gi"
DEFAULT_PODS = "110"
_POLL_SECONDS = 0.1


def kwok_node(name: str, cpu: str = DEFAULT_CPU, memory: str = DEFAULT_MEMORY, pods: str = DEFAULT_PODS,
              labels: Mapping[str, str] | None = None, managed: bool = True) -> dict[str, Any]:
    """A Node (its JSON form): the labels a kubelet sets, capacity = allocatable, no taint (pods can land).
    `managed` puts KWOK's annotation on it (KWOK then makes it Ready and keeps its Lease)."""
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                       "type": "kwok", **(labels or {})},
            "annotations": {KWOK_NODE_ANNOTATION: KWOK_NODE_ANNOTATION_VALUE} if managed else {},
        },
        "spec": {},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def node_ready(node: Mapping[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def create_nodes(api: KubeApi, names: Sequence[str], wait_ready: bool = True, timeout: float = 60.0,
                 **node_args: Any) -> list[dict[str, Any]]:
    """Creates the nodes; with wait_ready, returns them (as read back) once KWOK has made every one Ready."""
    created = [api.request_json("POST", "/api/v1/nodes", body=kwok_node(name, **node_args)) for name in names]
    if not wait_ready:
        return created
    pending = set(names)
    deadline = time.monotonic() + timeout
    while True:
        pending -= {n["metadata"]["name"] for n in api.request_json("GET", "/api/v1/nodes")["items"] if node_ready(n)}
        if not pending:
            return [api.request_json("GET", f"/api/v1/nodes/{name}") for name in names]
        if time.monotonic() >= deadline:
            raise TimeoutError(f"nodes not Ready after {timeout:.0f} s (is KWOK running?): {sorted(pending)}")
        time.sleep(_POLL_SECONDS)
