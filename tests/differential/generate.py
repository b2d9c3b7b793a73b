"""Seeded random clusters for differential testing against kube-scheduler (see the kube-oracle contract).

`generate_case(seed)` builds a small cluster (1-7 nodes, 0-8 running pods, 1-6 pending pods, up to 3
extra namespaces; for about half the seeds storage: volumes.py; for about a third devices: devices.py)
and, for about half the seeds, a KubeSchedulerConfiguration. Sizes and value pools are small so that
ties, exact fits, conflicts and preemption are frequent. Everything comes from `random.Random(seed)`
and, for storage and devices, a second and a third source seeded by the seed: the same seed gives the
same case, byte for byte. `Case.features` names the features the case exercises (tags of
`context.FEATURES`), for coverage checks.

`case_to_dir(case, path)` writes `cluster.yaml` (every object, in order) and `scheduler.yaml` (only
with a config) for `wasmsched simulate --config scheduler.yaml DIR/cluster.yaml` and kube-oracle.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tests.differential.config import generate_config
from tests.differential.context import (
    APPS,
    BASE_TIME,
    DEFAULT_KNOBS,
    DISKS,
    EPHEMERAL,
    GPU,
    HOSTNAME,
    HUGEPAGES,
    IMAGES,
    NODE_CPU,
    NODE_MEMORY,
    RACK,
    RACKS,
    REGION,
    REGION_OF,
    TAINT_EFFECTS,
    TAINT_KEYS,
    TEMPLATE_HASH,
    TIERS,
    UNSCHEDULABLE_TAINT,
    ZONE,
    ZONES,
    Ctx,
    Knobs,
    NodeFacts,
    Workload,
    pick_some,
)
from tests.differential.devices import add_devices
from tests.differential.pods import PodShape, make_pod
from tests.differential.volumes import add_storage

CLUSTER_FILE = "cluster.yaml"
CONFIG_FILE = "scheduler.yaml"

# (name, label set) of the namespaces a case may add to "default".
EXTRA_NAMESPACES = (("team-a", {"team": "a"}), ("team-b", {"team": "b"}), ("prod", {"env": "prod"}))
# (name, possible values) of the PriorityClasses, lowest first.
PRIORITY_CLASSES = (("low", (-10, 0, 5)), ("medium", (100,)), ("high", (1000, 5000)), ("urgent", (1_000_000,)))
TEMPLATE_HASHES = ("5d8f7c9b6", "7f9c4d8b5")
# Output order of kinds (the contract's order of meaning); running pods come before pending ones.
KIND_ORDER = ("Namespace", "PriorityClass", "Node", "PodDisruptionBudget", "StorageClass", "CSIDriver", "CSINode",
              "PersistentVolume", "PersistentVolumeClaim", "VolumeAttachment", "DeviceClass", "ResourceSlice",
              "ResourceClaim", "Service", "ReplicationController", "ReplicaSet", "StatefulSet")  # fmt: skip


@dataclass
class Case:
    seed: int
    objects: list[dict[str, Any]]
    config: dict[str, Any] | None
    features: set[str] = field(default_factory=set)


def generate_case(seed: int, knobs: Knobs = DEFAULT_KNOBS) -> Case:
    ctx = Ctx(seed=seed, rng=random.Random(seed), knobs=knobs)
    config = generate_config(ctx)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    by_kind["Namespace"] = _namespaces(ctx)
    scenario = ctx.chance(knobs.preemption_scenario)
    by_kind["PriorityClass"] = _priority_classes(ctx, scenario)
    by_kind["Node"] = [_node(ctx, name) for name in _node_names(ctx, ctx.rng.randint(1, 7))]
    workloads = _workloads(ctx)
    running, pending = _pods(ctx, scenario)
    by_kind["PodDisruptionBudget"] = _pdbs(ctx, running)
    # last, from its own random source: a seed without storage gives the case it gave before storage
    by_kind.update(add_storage(ctx, running, pending))
    # and after it, from a third source: a seed without devices gives the case it gave before devices
    by_kind.update(add_devices(ctx, running, pending))
    for w in workloads:
        by_kind.setdefault(w["kind"], []).append(w)
    objects = [obj for kind in KIND_ORDER for obj in by_kind.get(kind, [])] + running + pending
    _finish_metadata(ctx, objects)
    return Case(seed, objects, config, ctx.features)


def case_to_dir(case: Case, path: str | Path) -> Path:
    """Writes cluster.yaml (and scheduler.yaml with a config) into path (created); returns path."""
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / CLUSTER_FILE, "w") as f:
        yaml.safe_dump_all(case.objects, f, sort_keys=False)
    if case.config is not None:
        with open(out / CONFIG_FILE, "w") as f:
            yaml.safe_dump(case.config, f, sort_keys=False)
    return out


# ---------------------------------------------------------------- cluster-scoped objects


def _namespaces(ctx: Ctx) -> list[dict[str, Any]]:
    """Every namespace pods use is declared, with the label the API server sets, so that namespace
    selectors see the same namespaces on both sides."""
    names: list[tuple[str, dict[str, str]]] = [("default", {})]
    if ctx.chance(ctx.knobs.extra_namespaces):
        ctx.tag("namespace.extra")
        names += pick_some(ctx.rng, EXTRA_NAMESPACES, 1, 3)
    out = []
    for name, labels in names:
        if name != "default":
            ctx.namespaces.append(name)
        full = {"kubernetes.io/metadata.name": name, **labels}
        ctx.namespace_labels[name] = full
        out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": full}})
    return out


def _priority_classes(ctx: Ctx, scenario: bool) -> list[dict[str, Any]]:
    rng, k = ctx.rng, ctx.knobs
    if not scenario and not ctx.chance(k.priority_classes):
        return []
    chosen = pick_some(rng, PRIORITY_CLASSES, 1, len(PRIORITY_CLASSES))
    if scenario:
        # a preemption scenario needs a low class for the victims and a high one for the preemptor
        names = {n for n, _ in chosen}
        chosen += [c for c in PRIORITY_CLASSES if c[0] in ("low", "high") and c[0] not in names]
    chosen.sort(key=PRIORITY_CLASSES.index)
    default = rng.choice(chosen)[0] if ctx.chance(k.global_default) else None
    never = rng.choice(chosen)[0] if ctx.chance(k.preemption_policy_never) else None
    out = []
    for name, values in chosen:
        ctx.tag("priority_class")
        value = rng.choice(values)
        ctx.priority_classes[name] = value
        pc: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                              "metadata": {"name": name}, "value": value}
        if name == default:
            ctx.tag("priority_class.global_default")
            pc["globalDefault"] = True
        elif ctx.chance(0.2):
            pc["globalDefault"] = False
        if name == default:
            ctx.global_default = name
        ctx.preemption_policies[name] = "Never" if name == never else "PreemptLowerPriority"
        if name == never:
            ctx.tag("priority_class.never")
            pc["preemptionPolicy"] = "Never"
        elif ctx.chance(0.3):
            pc["preemptionPolicy"] = "PreemptLowerPriority"
        if ctx.chance(0.3):
            pc["description"] = f"{name} priority"
        out.append(pc)
    return out


def _node_names(ctx: Ctx, n: int) -> list[str]:
    """Names in a random creation order; one style has a name order unlike the numeric one."""
    style = ctx.rng.randrange(3)
    if style == 0:
        names = [f"node-{i}" for i in range(n)]
    elif style == 1:
        names = [f"node-{chr(ord('a') + i)}" for i in range(n)]
    else:
        names = [f"n{i * 5}" for i in range(n)]  # n0 < n10 < n15 < n5
    ctx.rng.shuffle(names)
    return names


def _node(ctx: Ctx, name: str) -> dict[str, Any]:
    rng, k = ctx.rng, ctx.knobs
    labels: dict[str, str] = {}
    if ctx.chance(k.node_hostname):
        labels[HOSTNAME] = name
    else:
        ctx.tag("node.no_hostname")
    if ctx.chance(k.node_zone):
        ctx.tag("node.zone")
        zone = rng.choice(ZONES)
        labels[ZONE] = zone
        if ctx.chance(0.5):
            ctx.tag("node.region")
            labels[REGION] = REGION_OF[zone]
    if ctx.chance(0.4):
        labels["disk"] = rng.choice(DISKS)
    if ctx.chance(0.5):
        labels["tier"] = rng.choice(TIERS)
    if ctx.chance(0.3):
        ctx.tag("node.rack")
        labels[RACK] = rng.choice(RACKS)
    cpu, memory = rng.choice(NODE_CPU), rng.choice(NODE_MEMORY)
    pods = 110
    if ctx.chance(k.node_pods_limit):
        ctx.tag("pods_limit")
        pods = rng.randint(2, 4)
    allocatable = {"cpu": ctx.cpu(cpu), "memory": ctx.memory(memory), "pods": str(pods)}
    gpu = 0
    if ctx.chance(k.node_gpu):
        ctx.tag("extended.node")
        gpu = rng.randint(0, 4)
        allocatable[GPU] = str(gpu)
        if gpu:
            labels["gpu"] = "true"
    if ctx.chance(k.node_hugepages):
        ctx.tag("hugepages.node")
        allocatable[HUGEPAGES] = ctx.memory(rng.choice((0, 128, 1024)))
    if ctx.chance(k.node_ephemeral):
        ctx.tag("ephemeral.node")
        allocatable[EPHEMERAL] = ctx.memory(rng.choice((10240, 102400)))
    taints = _taints(ctx)
    unschedulable = ctx.chance(k.node_unschedulable)
    if unschedulable:
        ctx.tag("node.unschedulable")
        if ctx.chance(0.7):
            # what the node lifecycle controller adds to a cordoned node
            ctx.tag("taint.unschedulable")
            taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"})
    ctx.nodes.append(NodeFacts(name, labels, cpu, memory, pods, gpu, taints, unschedulable))
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {"capacity": dict(allocatable), "allocatable": allocatable}
    if ctx.chance(k.node_images):
        ctx.tag("image.node")
        status["images"] = [{"names": list(names), "sizeBytes": size}
                            for _, names, size in pick_some(rng, IMAGES, 1, 4)]
    node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    if spec:
        node["spec"] = spec
    node["status"] = status
    return node


def _taints(ctx: Ctx) -> list[dict[str, str]]:
    if not ctx.chance(ctx.knobs.node_taints):
        return []
    out: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for _ in range(ctx.rng.randint(1, 2)):
        key, values = ctx.rng.choice(TAINT_KEYS)
        effect = ctx.rng.choice(TAINT_EFFECTS)
        if (key, effect) in seen:
            continue  # taints are unique by key and effect
        seen.add((key, effect))
        ctx.tag(f"taint.{effect}")
        taint = {"key": key, "effect": effect}
        value = ctx.rng.choice(values)
        if value:
            taint = {"key": key, "value": value, "effect": effect}
        out.append(taint)
    return out


# ---------------------------------------------------------------- workloads


def _workloads(ctx: Ctx) -> list[dict[str, Any]]:
    """Services and controllers whose selectors give pods without constraints of their own the
    system default spreading; at most one controller per app and namespace."""
    if not ctx.chance(ctx.knobs.workloads):
        return []
    rng = ctx.rng
    out = []
    for app in pick_some(rng, APPS, 1, 3):
        ns = rng.choice(ctx.namespaces) if ctx.chance(0.3) else "default"
        kinds = pick_some(rng, ("Service", rng.choice(("ReplicaSet", "ReplicationController", "StatefulSet"))), 1, 2)
        for kind in kinds:
            w = _workload(ctx, kind, ns, app)
            ctx.workloads.append(w)
            out.append(_workload_object(w))
    return out


def _workload(ctx: Ctx, kind: str, ns: str, app: str) -> Workload:
    if kind == "Service":
        ctx.tag("workload.service")
        return Workload(kind, ns, f"{app}-svc", app)
    if kind == "ReplicaSet":
        ctx.tag("workload.replicaset")
        template_hash = ctx.rng.choice(TEMPLATE_HASHES)
        return Workload(kind, ns, f"{app}-{template_hash}", app, template_hash)
    if kind == "ReplicationController":
        ctx.tag("workload.replicationcontroller")
        return Workload(kind, ns, f"{app}-rc", app)
    ctx.tag("workload.statefulset")
    return Workload(kind, ns, app, app)


def _workload_object(w: Workload) -> dict[str, Any]:
    meta = {"name": w.name, "namespace": w.namespace}
    labels = {"app": w.app}
    if w.template_hash:
        labels[TEMPLATE_HASH] = w.template_hash
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c0", "image": "nginx:1.27"}]}}
    if w.kind == "Service":
        spec: dict[str, Any] = {"selector": {"app": w.app}, "ports": [{"port": 80}]}
        return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}
    if w.kind == "ReplicationController":
        spec = {"replicas": 3, "selector": dict(labels), "template": template}
        return {"apiVersion": "v1", "kind": w.kind, "metadata": meta, "spec": spec}
    spec = {"replicas": 3, "selector": {"matchLabels": dict(labels)}, "template": template}
    if w.kind == "StatefulSet":
        spec["serviceName"] = w.app
    return {"apiVersion": "apps/v1", "kind": w.kind, "metadata": meta, "spec": spec}


def _controller(ctx: Ctx, ns: str, app: str | None) -> Workload | None:
    for w in ctx.workloads:
        if w.kind != "Service" and w.namespace == ns and w.app == app:
            return w
    return None


# ---------------------------------------------------------------- pods


class _Names:
    """pod-N names, unique within a namespace (the same name may appear in two namespaces)."""

    def __init__(self) -> None:
        self.next: dict[str, int] = {}

    def __call__(self, ns: str) -> str:
        n = self.next.get(ns, 0)
        self.next[ns] = n + 1
        return f"pod-{n}"


def _namespace(ctx: Ctx) -> str:
    return "default" if ctx.chance(0.65) else ctx.rng.choice(ctx.namespaces)


def _shape(ctx: Ctx, names: _Names, *, node: NodeFacts | None = None, cpu: int | None = None,
           priority_class: str | None = None, ns: str | None = None) -> PodShape:
    rng = ctx.rng
    ns = ns or _namespace(ctx)
    labels: dict[str, str] = {}
    if ctx.chance(0.9):
        labels["app"] = rng.choice(APPS)
    if ctx.chance(0.4):
        labels["tier"] = rng.choice(("front", "back"))
    owner = None
    controller = _controller(ctx, ns, labels.get("app"))
    if controller is not None and ctx.chance(0.8):
        api_version = "v1" if controller.kind == "ReplicationController" else "apps/v1"
        owner = {"apiVersion": api_version, "kind": controller.kind, "name": controller.name,
                 "uid": ctx.uid(controller.kind, ns, controller.name), "controller": True,
                 "blockOwnerDeletion": True}
        if controller.template_hash:
            labels[TEMPLATE_HASH] = controller.template_hash
    elif ctx.chance(0.15):
        labels[TEMPLATE_HASH] = rng.choice(TEMPLATE_HASHES)
    if priority_class is None and ctx.priority_classes and ctx.chance(ctx.knobs.priority_class_name):
        classes = sorted(ctx.priority_classes, key=lambda n: ctx.priority_classes[n])
        # running pods mostly get the lower classes, pending pods any
        priority_class = rng.choice(classes[: len(classes) // 2 + 1] if node is not None else classes)
    return PodShape(ns, names(ns), labels, node=node, cpu=cpu, priority_class=priority_class, owner=owner)


def _pods(ctx: Ctx, scenario: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = ctx.rng
    names = _Names()
    victims = rng.randint(1, 3) if scenario else 0
    running = [make_pod(ctx, _shape(ctx, names, node=rng.choice(ctx.nodes)))
               for _ in range(rng.randint(0, 8 - victims))]
    pending = [make_pod(ctx, _shape(ctx, names)) for _ in range(rng.randint(1, 6 - scenario))]
    if scenario:
        victim_pods, preemptor = _preemption_scenario(ctx, names, victims)
        running += victim_pods
        pending.insert(rng.randint(0, len(pending)), preemptor)
    # A running pod has started (the kubelet wrote status.startTime), each at its own moment and not in
    # name order: preemption orders victims of equal priority by start time, and kube reads the
    # current time for a pod without one.
    for p, minute in zip(running, rng.sample(range(600), len(running)), strict=True):
        p.setdefault("status", {})["startTime"] = f"2023-12-31T{minute // 60:02d}:{minute % 60:02d}:00Z"
    return running, pending


def _preemption_scenario(ctx: Ctx, names: _Names, count: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Low-priority running pods that fill one node's cpu, and a high-priority pending pod that only fits
    there if some of them go."""
    ctx.tag("preemption_scenario")
    rng = ctx.rng
    # a node the preemptor can use (no hard taints, schedulable), when there is one
    open_nodes = [n for n in ctx.nodes if not n.unschedulable
                  and all(t["effect"] == "PreferNoSchedule" for t in n.taints)]
    node = rng.choice(open_nodes or ctx.nodes)
    share = _round_cpu(node.cpu // count)
    victims = []
    for _ in range(count):
        low = "low" if ctx.chance(0.8) else None
        victims.append(make_pod(ctx, _shape(ctx, names, node=node, cpu=share, priority_class=low, ns="default")))
    want = _round_cpu(rng.choice((node.cpu // 2, node.cpu, max(share, 250))))
    preemptor = make_pod(ctx, _shape(ctx, names, cpu=want, priority_class="high"))
    return victims, preemptor


def _round_cpu(millis: int) -> int:
    """Down to a multiple of 250m (at least 100m), so quantities stay readable."""
    return max(100, millis - millis % 250)


# ---------------------------------------------------------------- disruption budgets


def _pdbs(ctx: Ctx, running: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """PDBs selecting running pods by app, with the status the disruption controller would write
    (sometimes a stale one): the oracle has no disruption controller."""
    groups = sorted({(p["metadata"]["namespace"], app) for p in running
                     if (app := p["metadata"].get("labels", {}).get("app"))})
    if not groups or not ctx.chance(ctx.knobs.pdbs):
        return []
    rng = ctx.rng
    out = []
    for ns, app in pick_some(rng, groups, 1, 2):
        ctx.tag("pdb")
        expected = sum(1 for p in running if p["metadata"]["namespace"] == ns
                       and p["metadata"].get("labels", {}).get("app") == app)
        spec: dict[str, Any] = {"selector": {"matchLabels": {"app": app}}}
        percent = ctx.chance(0.3)
        if percent:
            ctx.tag("pdb.percent")
        if ctx.chance(0.5):
            ctx.tag("pdb.min_available")
            pct = rng.choice((50, 100))
            spec["minAvailable"] = f"{pct}%" if percent else rng.randint(0, 2)
            desired = math.ceil(pct * expected / 100) if percent else spec["minAvailable"]
        else:
            ctx.tag("pdb.max_unavailable")
            pct = rng.choice((0, 50))
            spec["maxUnavailable"] = f"{pct}%" if percent else rng.randint(0, 1)
            desired = expected - (math.ceil(pct * expected / 100) if percent else spec["maxUnavailable"])
        allowed = max(0, expected - desired)
        if ctx.chance(0.25):
            allowed = rng.choice((0, 1))  # a stale status
        ctx.tag("pdb.allowed_positive" if allowed else "pdb.allowed_zero")
        status = {"observedGeneration": 1, "disruptionsAllowed": allowed, "currentHealthy": expected,
                  "desiredHealthy": max(0, desired), "expectedPods": expected}
        out.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                    "metadata": {"name": f"{app}-pdb", "namespace": ns}, "spec": spec, "status": status})
    return out


# ---------------------------------------------------------------- metadata


def _finish_metadata(ctx: Ctx, objects: list[dict[str, Any]]) -> None:
    """uid and creationTimestamp, one second apart in output order (the pending pods' creation order)."""
    for i, obj in enumerate(objects):
        old = obj["metadata"]
        ns = old.get("namespace", "")
        meta: dict[str, Any] = {"name": old["name"]}
        if ns:
            meta["namespace"] = ns
        meta["uid"] = ctx.uid(obj["kind"], ns, old["name"])
        meta["creationTimestamp"] = datetime.fromtimestamp(BASE_TIME + i, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        meta.update((k, v) for k, v in old.items() if k not in ("name", "namespace"))
        obj["metadata"] = meta
