"""Random pods: containers and their resources, host ports, images, tolerations, node and inter-pod
affinity and topology spread constraints, each valid as kube-apiserver validates a pod on create."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.differential.context import (
    APPS,
    CPU_REQUESTS,
    DISKS,
    EPHEMERAL,
    GPU,
    HOSTNAME,
    HUGEPAGES,
    IMAGES,
    LARGE_IMAGE_BYTES,
    MEMORY_REQUESTS,
    NOT_ON_NODES_IMAGE,
    RACK,
    SECOND_SCHEDULER,
    TAINT_EFFECTS,
    TAINT_KEYS,
    TEMPLATE_HASH,
    UNKNOWN_SCHEDULER,
    UNSCHEDULABLE_TAINT,
    ZONE,
    ZONES,
    Ctx,
    NodeFacts,
    pick_some,
)


@dataclass
class PodShape:
    """What the caller decides about a pod; the rest is random."""

    namespace: str
    name: str
    labels: dict[str, str]
    node: NodeFacts | None = None  # a running pod's node
    cpu: int | None = None  # the first container's cpu request, when the caller needs it
    priority_class: str | None = None
    owner: dict[str, Any] | None = None
    status: dict[str, Any] = field(default_factory=dict)


def make_pod(ctx: Ctx, shape: PodShape) -> dict[str, Any]:
    rng, k = ctx.rng, ctx.knobs
    pending = shape.node is None
    spec: dict[str, Any] = {}
    containers, requested = _containers(ctx, shape)
    spec["containers"] = containers
    if ctx.chance(k.init_containers):
        spec["initContainers"] = _init_containers(ctx, requested)
    if ctx.chance(k.overhead):
        ctx.tag("overhead")
        spec["overhead"] = {"cpu": ctx.cpu(rng.choice((50, 100, 250))), "memory": ctx.memory(rng.choice((32, 64)))}
    if ctx.chance(k.pod_level_resources):
        # pod-level requests may not be below what the containers request together
        ctx.tag("pod_level_resources")
        spec["resources"] = {
            "requests": {
                "cpu": ctx.cpu(requested["cpu"] + rng.choice((0, 100, 500))),
                "memory": ctx.memory(requested["memory"] + rng.choice((0, 64, 1024))),
            }
        }
    if shape.node is not None:
        spec["nodeName"] = shape.node.name
    if shape.priority_class is not None:
        ctx.tag("priority_class_name")
        spec["priorityClassName"] = shape.priority_class
    if ctx.chance(k.stored_priority):
        _stored_priority(ctx, spec)
    if ctx.chance(k.tolerations):
        spec["tolerations"] = _tolerations(ctx)
    if pending and ctx.chance(k.node_selector):
        spec["nodeSelector"] = _node_selector(ctx)
    affinity: dict[str, Any] = {}
    if pending and ctx.chance(k.node_affinity):
        affinity["nodeAffinity"] = _node_affinity(ctx)
    if ctx.chance(k.pod_affinity if pending else k.running_pod_affinity):
        if not pending:
            ctx.tag("interpod.running")
        affinity.update(_pod_affinity(ctx, shape.labels))
    if affinity:
        spec["affinity"] = affinity
    if ctx.chance(k.spread):
        spec["topologySpreadConstraints"] = _spread_constraints(ctx, shape.labels)
    if pending:
        _queueing(ctx, spec, shape)
    meta: dict[str, Any] = {"name": shape.name, "namespace": shape.namespace}
    if shape.labels:
        meta["labels"] = dict(shape.labels)
    if shape.owner is not None:
        ctx.tag("owner_reference")
        meta["ownerReferences"] = [shape.owner]
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if shape.status:
        pod["status"] = shape.status
    return pod


def _stored_priority(ctx: Ctx, spec: dict[str, Any]) -> None:
    """What the Priority admission plugin stores: the class (or the global default) with its value and
    preemption policy; priority 0 and PreemptLowerPriority without either."""
    ctx.tag("priority.stored")
    name = spec.get("priorityClassName") or ctx.global_default
    if name:
        spec["priorityClassName"] = name
        spec["priority"] = ctx.priority_classes[name]
        spec["preemptionPolicy"] = ctx.preemption_policies[name]
    else:
        spec["priority"] = 0
        spec["preemptionPolicy"] = "PreemptLowerPriority"


def _queueing(ctx: Ctx, spec: dict[str, Any], shape: PodShape) -> None:
    k = ctx.knobs
    if ctx.chance(k.scheduling_gates):
        ctx.tag("scheduling_gates")
        spec["schedulingGates"] = [{"name": "example.com/gate"}]
    elif ctx.nodes and ctx.chance(k.nominated_node):
        # only a pod that went through a scheduling cycle (so not a gated one) can have been nominated
        ctx.tag("nominated_node")
        shape.status["nominatedNodeName"] = ctx.rng.choice(ctx.nodes).name
    r = ctx.rng.random()
    # mostly for a config with a second profile; without one such pods are skipped, as unknown ones
    second = k.pod_second_scheduler if ctx.second_profile else k.pod_second_scheduler / 8
    if r < second:
        ctx.tag("scheduler_name.second")
        spec["schedulerName"] = SECOND_SCHEDULER
    elif r < second + k.pod_unknown_scheduler:
        ctx.tag("scheduler_name.unknown")
        spec["schedulerName"] = UNKNOWN_SCHEDULER
    elif ctx.chance(0.2):
        spec["schedulerName"] = "default-scheduler"


# ---------------------------------------------------------------- containers


def _containers(ctx: Ctx, shape: PodShape) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The containers and their summed cpu (millicores) and memory (Mi) requests."""
    rng = ctx.rng
    count = 1 + (rng.randint(1, 2) if ctx.chance(ctx.knobs.extra_containers) else 0)
    if count > 1:
        ctx.tag("multi_container")
    total = {"cpu": 0, "memory": 0}
    out = []
    host_ports: set[int] = set()
    for i in range(count):
        cpu = shape.cpu if i == 0 and shape.cpu is not None else None
        c, req = _container(ctx, f"c{i}", cpu)
        total["cpu"] += req["cpu"]
        total["memory"] += req["memory"]
        if ctx.chance(ctx.knobs.host_ports):
            port = _host_port(ctx, host_ports, shape.node is None)
            if port is not None:
                c["ports"] = [port]
        elif ctx.chance(0.1):
            c["ports"] = [{"containerPort": 8080, "name": "http"}]  # no hostPort: NodePorts ignores it
        out.append(c)
    return out, total


def _container(ctx: Ctx, name: str, cpu: int | None = None) -> tuple[dict[str, Any], dict[str, int]]:
    """One container with random resources; returns it and its cpu/memory requests (as the API server
    defaults them: a limit without a request is the request)."""
    rng, k = ctx.rng, ctx.knobs
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    cpu_m = cpu if cpu is not None else (rng.choice(CPU_REQUESTS) if ctx.chance(k.cpu_request) else None)
    mem_mi = rng.choice(MEMORY_REQUESTS) if ctx.chance(k.memory_request) else None
    if cpu_m is not None:
        ctx.tag("req.cpu")
        requests["cpu"] = ctx.cpu(cpu_m)
    if mem_mi is not None:
        ctx.tag("req.memory")
        requests["memory"] = ctx.memory(mem_mi)
    if ctx.chance(k.ephemeral_request):
        ctx.tag("ephemeral.pod")
        requests[EPHEMERAL] = ctx.memory(rng.choice((100, 1024, 20480)))
    if requests and cpu is None and ctx.chance(k.limits_only):
        ctx.tag("limits_only")
        requests, limits = {}, requests
    elif cpu_m is not None and ctx.chance(k.limits_above_requests):
        ctx.tag("limits_above_requests")
        limits["cpu"] = ctx.cpu(cpu_m * 2 or 500)
        if mem_mi is not None:
            limits["memory"] = ctx.memory(mem_mi or 64)
    if ctx.chance(k.gpu_request):
        # extended resources cannot be overcommitted: the request equals the limit (or is left out)
        ctx.tag("extended.pod")
        n = str(rng.choice((1, 1, 2)))
        limits[GPU] = n
        if ctx.chance(0.6):
            requests[GPU] = n
    if ctx.chance(k.hugepages_request):
        ctx.tag("hugepages.pod")
        size = ctx.memory(rng.choice((2, 64, 128)))
        limits[HUGEPAGES] = requests[HUGEPAGES] = size
        if "memory" not in requests and "memory" not in limits:
            # hugepages require a cpu or memory request or limit
            requests["memory"] = ctx.memory(64)
            mem_mi = 64
    if not requests and not limits:
        ctx.tag("req.none")
    c: dict[str, Any] = {"name": name, "image": _image(ctx)}
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    if resources:
        c["resources"] = resources
    effective_cpu = cpu_m if cpu_m is not None else 0
    return c, {"cpu": effective_cpu, "memory": mem_mi or 0}


def _init_containers(ctx: Ctx, requested: dict[str, int]) -> list[dict[str, Any]]:
    out = []
    for i in range(ctx.rng.randint(1, 2)):
        ctx.tag("init_container")
        c, req = _container(ctx, f"init-{i}")
        if ctx.chance(ctx.knobs.sidecar):
            ctx.tag("sidecar")
            c["restartPolicy"] = "Always"
        # the sum bounds what any aggregation of the init containers needs (for pod-level requests)
        requested["cpu"] += req["cpu"]
        requested["memory"] += req["memory"]
        out.append(c)
    return out


def _image(ctx: Ctx) -> str:
    if ctx.chance(0.1):
        ctx.tag("image.not_on_nodes")
        return NOT_ON_NODES_IMAGE
    name, _names, size = ctx.rng.choice(IMAGES)
    if ":" not in name.rsplit("/", 1)[-1]:
        ctx.tag("image.untagged")
    if size > LARGE_IMAGE_BYTES:
        ctx.tag("image.large")
    return name


def _host_port(ctx: Ctx, used: set[int], pending: bool) -> dict[str, Any] | None:
    rng = ctx.rng
    host_port = rng.choice((80, 443, 8080, 53))
    if host_port in used:
        return None  # one pod may not use a host port twice
    used.add(host_port)
    ctx.tag("host_port.pending" if pending else "host_port.running")
    port: dict[str, Any] = {"containerPort": rng.choice((80, host_port, 9000)), "hostPort": host_port}
    protocol = rng.choice(("", "TCP", "UDP"))
    if protocol:
        port["protocol"] = protocol
        if protocol == "UDP":
            ctx.tag("host_port.udp")
    host_ip = rng.choice(("", "", "0.0.0.0", "127.0.0.1", "10.0.0.1"))
    if host_ip:
        ctx.tag("host_port.host_ip")
        port["hostIP"] = host_ip
    return port


# ---------------------------------------------------------------- taints and node selection


def _tolerations(ctx: Ctx) -> list[dict[str, Any]]:
    rng = ctx.rng
    out: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.07:
            ctx.tag("toleration.exists_all")
            out.append({"operator": "Exists"})
            continue
        if r < 0.17:
            ctx.tag("toleration.unschedulable")
            out.append({"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"})
            continue
        key, values = rng.choice(TAINT_KEYS)
        t: dict[str, Any] = {"key": key}
        if r < 0.45:
            ctx.tag("toleration.exists_key")
            t["operator"] = "Exists"
        else:
            ctx.tag("toleration.Equal")
            if ctx.chance(0.7):
                t["operator"] = "Equal"
            t["value"] = rng.choice(values)
        effect = rng.choice(("", *TAINT_EFFECTS))
        if effect:
            t["effect"] = effect
        else:
            ctx.tag("toleration.empty_effect")
        if effect == "NoExecute" and ctx.chance(0.5):
            ctx.tag("toleration.seconds")
            t["tolerationSeconds"] = rng.choice((0, 60, 3600))
        out.append(t)
    return out


def _node_selector(ctx: Ctx) -> dict[str, str]:
    ctx.tag("node_selector")
    rng = ctx.rng
    r = rng.random()
    if r < 0.4:
        return {ZONE: rng.choice((*ZONES, "zone-x"))}
    if r < 0.7:
        return {"disk": rng.choice(DISKS)}
    if r < 0.9 and ctx.nodes:
        return {HOSTNAME: rng.choice(ctx.nodes).name}
    return {"gpu": "true", "disk": rng.choice(DISKS)}


def _node_affinity(ctx: Ctx) -> dict[str, Any]:
    rng = ctx.rng
    out: dict[str, Any] = {}
    if ctx.chance(0.7):
        ctx.tag("node_affinity.required")
        terms = [node_selector_term(ctx) for _ in range(rng.randint(1, 2))]
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if not out or ctx.chance(0.5):
        ctx.tag("node_affinity.preferred")
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.choice((1, 10, 50, 100)), "preference": node_selector_term(ctx)}
            for _ in range(rng.randint(1, 3))
        ]
    return out


def node_selector_term(ctx: Ctx) -> dict[str, Any]:
    """A term with 1-2 label expressions (every operator) and sometimes a metadata.name field."""
    rng = ctx.rng
    term: dict[str, Any] = {}
    if ctx.nodes and ctx.chance(0.15):
        ctx.tag("match_fields")
        term["matchFields"] = [
            {"key": "metadata.name", "operator": rng.choice(("In", "NotIn")), "values": [rng.choice(ctx.nodes).name]}
        ]
        if ctx.chance(0.5):
            return term
    term["matchExpressions"] = [_node_requirement(ctx) for _ in range(rng.randint(1, 2))]
    return term


def _node_requirement(ctx: Ctx) -> dict[str, Any]:
    rng = ctx.rng
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
    ctx.tag(f"op.{op}")
    if op in ("Gt", "Lt"):
        return {"key": "tier", "operator": op, "values": [str(rng.randint(0, 5))]}
    keys: list[tuple[str, tuple[str, ...]]] = [(ZONE, ZONES), ("disk", DISKS), ("gpu", ("true",)), (RACK, ())]
    if ctx.nodes:
        keys.append((HOSTNAME, tuple(n.name for n in ctx.nodes)))
    key, values = rng.choice(keys)
    if op in ("Exists", "DoesNotExist") or not values:
        return {"key": key, "operator": rng.choice(("Exists", "DoesNotExist")) if not values else op}
    return {"key": key, "operator": op, "values": sorted(pick_some(rng, values, 1, 2))}


# ---------------------------------------------------------------- inter-pod affinity


def _app_selector(ctx: Ctx, own_app: str | None) -> tuple[dict[str, Any], bool]:
    """A label selector on "app" (mostly the pod's own app, so the pod counts itself); and whether it
    uses matchExpressions."""
    rng = ctx.rng
    app = own_app if own_app and ctx.chance(0.6) else rng.choice(APPS)
    if ctx.chance(0.7):
        return {"matchLabels": {"app": app}}, False
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
    expr: dict[str, Any] = {"key": "app", "operator": op}
    if op in ("In", "NotIn"):
        expr["values"] = sorted({app, rng.choice(APPS)})
    return {"matchExpressions": [expr]}, True


def _pod_affinity_term(ctx: Ctx, labels: dict[str, str]) -> dict[str, Any]:
    rng = ctx.rng
    selector, expressions = _app_selector(ctx, labels.get("app"))
    if expressions:
        ctx.tag("interpod.match_expressions")
    topology = rng.choice((ZONE, ZONE, HOSTNAME, HOSTNAME, RACK))
    if topology == ZONE:
        ctx.tag("interpod.zone")
    elif topology == HOSTNAME:
        ctx.tag("interpod.hostname")
    term: dict[str, Any] = {"labelSelector": selector, "topologyKey": topology}
    if ctx.chance(0.2):
        ctx.tag("interpod.namespaces")
        term["namespaces"] = sorted(pick_some(rng, ctx.namespaces, 1, 2))
    if ctx.chance(0.2):
        ctx.tag("interpod.namespace_selector")
        if ctx.chance(0.4):
            ctx.tag("interpod.namespace_selector_empty")
            term["namespaceSelector"] = {}
        else:
            term["namespaceSelector"] = {"matchLabels": {"team": rng.choice(("a", "b"))}}
    # label keys the selector does not use (the selector only uses "app")
    match_keys = ["tier"] if ctx.chance(0.12) else []
    if match_keys:
        ctx.tag("interpod.match_label_keys")
        term["matchLabelKeys"] = match_keys
    if ctx.chance(0.12):
        ctx.tag("interpod.mismatch_label_keys")
        term["mismatchLabelKeys"] = [TEMPLATE_HASH]
    return term


def _pod_affinity(ctx: Ctx, labels: dict[str, str]) -> dict[str, Any]:
    rng = ctx.rng
    kinds = rng.choice((("podAffinity",), ("podAntiAffinity",), ("podAffinity", "podAntiAffinity")))
    out: dict[str, Any] = {}
    for kind in kinds:
        tag = "pod_affinity" if kind == "podAffinity" else "pod_anti_affinity"
        section: dict[str, Any] = {}
        if ctx.chance(0.6):
            ctx.tag(f"{tag}.required")
            section["requiredDuringSchedulingIgnoredDuringExecution"] = [_pod_affinity_term(ctx, labels)]
        if not section or ctx.chance(0.4):
            ctx.tag(f"{tag}.preferred")
            section["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.choice((1, 5, 50, 100)), "podAffinityTerm": _pod_affinity_term(ctx, labels)}
                for _ in range(rng.randint(1, 2))
            ]
        out[kind] = section
    return out


# ---------------------------------------------------------------- topology spread


def _spread_constraints(ctx: Ctx, labels: dict[str, str]) -> list[dict[str, Any]]:
    rng = ctx.rng
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for _ in range(rng.randint(1, 2)):
        key = rng.choice((ZONE, HOSTNAME, RACK))
        when = rng.choice(("DoNotSchedule", "ScheduleAnyway"))
        if (key, when) in seen:
            continue  # one constraint per (topologyKey, whenUnsatisfiable)
        seen.add((key, when))
        ctx.tag(f"spread.{when}")
        ctx.tag({ZONE: "spread.zone", HOSTNAME: "spread.hostname", RACK: "spread.custom"}[key])
        c: dict[str, Any] = {"maxSkew": rng.choice((1, 1, 2, 3)), "topologyKey": key, "whenUnsatisfiable": when}
        if ctx.chance(0.07):
            ctx.tag("spread.no_selector")  # a nil selector matches no pod
        else:
            selector, expressions = _app_selector(ctx, labels.get("app"))
            if expressions:
                ctx.tag("spread.match_expressions")
            c["labelSelector"] = selector
            if ctx.chance(0.25):
                ctx.tag("spread.match_label_keys")
                c["matchLabelKeys"] = [TEMPLATE_HASH]
        if when == "DoNotSchedule" and ctx.chance(0.25):
            ctx.tag("spread.min_domains")
            c["minDomains"] = rng.randint(1, 4)
        if ctx.chance(0.25):
            ctx.tag("spread.node_affinity_policy")
            c["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if ctx.chance(0.25):
            ctx.tag("spread.node_taints_policy")
            c["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        out.append(c)
    return out
