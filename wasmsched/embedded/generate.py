"""Synthetic clusters for benchmarks and smoke tests: `--generate nodes=N,pods=M[,seed=S]`."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from wasmsched.api.types import Node, Pod
from wasmsched.util.intbounds import INT64

ZONES = ("zone-a", "zone-b", "zone-c")
NODE_SHAPES = (("4", "16Gi"), ("8", "32Gi"), ("16", "64Gi"), ("32", "128Gi"))
POD_SHAPES = (("100m", "128Mi"), ("250m", "512Mi"), ("500m", "1Gi"), ("1", "2Gi"), ("2", "4Gi"))


class GenerateSpecError(ValueError):
    pass


# Kubernetes' largest tested clusters (5,000 nodes supported, 15,000 in scale tests; 150,000 pods in
# all): beyond them a synthetic cluster only measures how the machine runs out of memory.
MAX_NODES = 15_000
MAX_PODS = 150_000
_LIMITS = {"nodes": (0, MAX_NODES), "pods": (0, MAX_PODS), "seed": INT64}
_INT = re.compile(r"[+-]?[0-9]{1,20}")


@dataclass(frozen=True)
class GenerateSpec:
    nodes: int
    pods: int
    seed: int = 1


def parse_spec(spec: str) -> GenerateSpec:
    """`nodes=N,pods=M[,seed=S]`, each within its bounds."""
    values: dict[str, int] = {}
    for part in spec.split(","):
        if not part.strip():
            continue
        k, sep, v = part.partition("=")
        k, v = k.strip(), v.strip()
        if not sep or k not in _LIMITS:
            raise GenerateSpecError(f'--generate: expected nodes=N,pods=M[,seed=S], got "{_clip(part)}"')
        lo, hi = _LIMITS[k]
        if not _INT.fullmatch(v):
            raise GenerateSpecError(f'--generate: {k} must be an integer, got "{_clip(v)}"')
        n = int(v)
        if not lo <= n <= hi:
            raise GenerateSpecError(f"--generate: {k} must be between {lo} and {hi}, got {n}")
        values[k] = n
    if "nodes" not in values or "pods" not in values:
        raise GenerateSpecError("--generate: both nodes=N and pods=M are required")
    return GenerateSpec(**values)


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def generate(nodes: int, pods: int, seed: int = 1) -> dict[str, list[Any]]:
    """Nodes across three zones with mixed sizes, a few tainted; pods with mixed requests, some with
    node selectors, tolerations and spread constraints."""
    rng = random.Random(seed)
    node_objs: list[Node] = []
    for i in range(nodes):
        n = Node()
        n.metadata.name = f"node-{i:05d}"
        n.metadata.uid = f"gen-node-{i}"
        zone = ZONES[i % len(ZONES)]
        n.metadata.labels.update({"kubernetes.io/hostname": n.metadata.name,
                                  "topology.kubernetes.io/zone": zone,
                                  "node.kubernetes.io/instance-type": f"shape-{i % len(NODE_SHAPES)}"})
        cpu, mem = NODE_SHAPES[i % len(NODE_SHAPES)]
        for k, v in (("cpu", cpu), ("memory", mem), ("pods", "110")):
            n.status.capacity[k].string = v
            n.status.allocatable[k].string = v
        if i % 10 == 9:
            t = n.spec.taints.add()
            t.key, t.value, t.effect = "dedicated", "batch", "NoSchedule"
        img = n.status.images.add()
        img.names.append("registry.k8s.io/nginx:1.27")
        img.sizeBytes = 190_000_000 if i % 2 else 0
        node_objs.append(n)
    pod_objs: list[Pod] = []
    for j in range(pods):
        p = Pod()
        p.metadata.name = f"pod-{j:06d}"
        p.metadata.namespace = "default"
        p.metadata.uid = f"gen-pod-{j}"
        app = f"app-{j % 20}"
        p.metadata.labels["app"] = app
        p.spec.schedulerName = "default-scheduler"
        c = p.spec.containers.add()
        c.name, c.image = "main", "registry.k8s.io/nginx:1.27"
        cpu, mem = POD_SHAPES[rng.randrange(len(POD_SHAPES))]
        c.resources.requests["cpu"].string = cpu
        c.resources.requests["memory"].string = mem
        if j % 7 == 0:
            p.spec.nodeSelector["topology.kubernetes.io/zone"] = ZONES[j % len(ZONES)]
        if j % 11 == 0:
            tol = p.spec.tolerations.add()
            tol.key, tol.operator, tol.value, tol.effect = "dedicated", "Equal", "batch", "NoSchedule"
        if j % 5 == 0:
            tsc = p.spec.topologySpreadConstraints.add()
            tsc.maxSkew, tsc.topologyKey, tsc.whenUnsatisfiable = 1, "topology.kubernetes.io/zone", "ScheduleAnyway"
            tsc.labelSelector.matchLabels["app"] = app
        pod_objs.append(p)
    return {"Node": node_objs, "Pod": pod_objs}
