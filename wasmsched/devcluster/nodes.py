"""KWOK-managed Nodes: what a real node of a mid-sized cloud machine reports, minus the kubelet."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from kubernetes import client

from wasmsched.devcluster.components import KWOK_NODE_ANNOTATION, KWOK_NODE_ANNOTATION_VALUE

DEFAULT_CPU = "32"
DEFAULT_MEMORY = "256Gi"
DEFAULT_PODS = "110"
_POLL_SECONDS = 0.1


def kwok_node(name: str, cpu: str = DEFAULT_CPU, memory: str = DEFAULT_MEMORY, pods: str = DEFAULT_PODS,
              labels: Mapping[str, str] | None = None, managed: bool = True) -> client.V1Node:
    """A Node: the labels a kubelet sets, capacity = allocatable, no taint (pods can land). `managed` puts
    KWOK's annotation on it (KWOK then makes it Ready and keeps its Lease)."""
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    return client.V1Node(
        api_version="v1", kind="Node",
        metadata=client.V1ObjectMeta(
            name=name,
            labels={"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                    "type": "kwok", **(labels or {})},
            annotations={KWOK_NODE_ANNOTATION: KWOK_NODE_ANNOTATION_VALUE} if managed else {}),
        spec=client.V1NodeSpec(),
        status=client.V1NodeStatus(capacity=dict(resources), allocatable=dict(resources)))


def node_ready(node: client.V1Node) -> bool:
    conditions = (node.status.conditions if node.status else None) or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def create_nodes(api: client.ApiClient, names: Sequence[str], wait_ready: bool = True, timeout: float = 60.0,
                 **node_args: Any) -> list[client.V1Node]:
    """Creates the nodes; with wait_ready, returns once KWOK has made every one Ready."""
    core = client.CoreV1Api(api)
    created = [core.create_node(body=kwok_node(name, **node_args)) for name in names]
    if not wait_ready:
        return created
    pending = set(names)
    deadline = time.monotonic() + timeout
    while True:
        pending -= {n.metadata.name for n in core.list_node().items if n.metadata and node_ready(n)}
        if not pending:
            return [core.read_node(name) for name in names]
        if time.monotonic() >= deadline:
            raise TimeoutError(f"nodes not Ready after {timeout:.0f} s (is KWOK running?): {sorted(pending)}")
        time.sleep(_POLL_SECONDS)
