"""Random devices for differential cases (dynamic resource allocation, resource.k8s.io/v1): DeviceClasses,
ResourceSlices and ResourceClaims, and pods that use the claims, for the DynamicResources plugin.

The devices come from their own random source (seeded by the case's seed), drawn after everything else
(storage included), so a seed without devices gives the same case as before devices existed.

Claims are created as objects and named by pods with resourceClaimName: neither side runs the
resourceclaim controller that would make claims from templates. Some claims are already allocated to and
reserved for a running pod on its node (their devices are taken); some pending pods share one claim.

kube's allocator walks pools in Go map order (random) and keeps the first allocation that fits, so the
device a claim gets could depend on that order. The case is built so that it does not: every device class
selects the devices of one driver, and every node sees at most one pool of each driver -- per-node pools
(spec.nodeName) for two drivers, and for the third either one pool for all nodes or one pool per zone
(spec.nodeSelector on the zone label; a node has at most one zone). Each pool is one slice.

Every device of a driver has every attribute that driver's selectors name, so CEL never looks up a
missing attribute (cel-go's and cel-python's runtime errors are worded differently).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from wasmsched.testing.differential.context import ZONE, ZONES, Ctx

API_VERSION = "resource.k8s.io/v1"
GPU_DRIVER = "gpu.example.com"
NIC_DRIVER = "nic.example.com"
FPGA_DRIVER = "fpga.example.com"  # network-attached: pools for all nodes or a zone
NODE_LOCAL_DRIVERS = (GPU_DRIVER, NIC_DRIVER)
MODELS = {GPU_DRIVER: ("a100", "h100"), NIC_DRIVER: ("cx6", "cx7"), FPGA_DRIVER: ("u250", "u280")}
SHORT = {GPU_DRIVER: "gpu", NIC_DRIVER: "nic", FPGA_DRIVER: "fpga"}
MISSING_CLASS = "tpu"  # a class no case declares
HOSTNAME_FIELD = "metadata.name"


@dataclass
class DeviceFacts:
    driver: str
    pool: str
    name: str
    model: str
    cores: int
    virtual: bool


@dataclass
class ClassFacts:
    name: str
    driver: str


@dataclass
class Devices:
    by_kind: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    classes: list[ClassFacts] = field(default_factory=list)
    # devices of node-local pools, by node
    local: dict[str, list[DeviceFacts]] = field(default_factory=dict)
    taken: set[tuple[str, str, str]] = field(default_factory=set)  # (driver, pool, device)
    claim_count: dict[str, int] = field(default_factory=dict)  # per namespace
    # unallocated claims a further pending pod may share: (namespace, name)
    shareable: list[tuple[str, str]] = field(default_factory=list)

    def add(self, obj: dict[str, Any]) -> None:
        self.by_kind.setdefault(obj["kind"], []).append(obj)


def add_devices(ctx: Ctx, running: list[dict[str, Any]],
                pending: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Device objects by kind (empty for most seeds); gives some pods claims (in place)."""
    rng = random.Random(f"{ctx.seed}/devices")
    if rng.random() >= ctx.knobs.devices:
        return {}
    saved, ctx.rng = ctx.rng, rng  # ctx.chance and ctx.tag draw from the devices source
    try:
        dv = Devices()
        drivers = _drivers(ctx)
        _classes(ctx, dv, drivers)
        _slices(ctx, dv, drivers)
        for pod in running:
            if pod["spec"]["nodeName"] in dv.local and ctx.chance(ctx.knobs.running_pod_claims):
                _allocated_claim(ctx, dv, pod)
        for pod in pending:
            if ctx.chance(ctx.knobs.pod_claims):
                _pending_claims(ctx, dv, pod)
        return dv.by_kind
    finally:
        ctx.rng = saved


def _drivers(ctx: Ctx) -> list[str]:
    rng = ctx.rng
    drivers = [GPU_DRIVER]
    if ctx.chance(0.5):
        drivers.append(NIC_DRIVER)
    if ctx.chance(0.4):
        drivers.append(FPGA_DRIVER)
    rng.shuffle(drivers)
    return sorted(drivers)


def _attr(driver: str, name: str) -> str:
    return f'device.attributes["{driver}"].{name}'


def _class_selector(ctx: Ctx, driver: str) -> tuple[str, str]:
    """(suffix of the class name, CEL expression) of a class of the driver's devices."""
    rng = ctx.rng
    r = rng.random()
    if r < 0.35:
        ctx.tag("dra.class.driver")
        return "", f'device.driver == "{driver}"'
    if r < 0.6:
        ctx.tag("dra.class.string_attribute")
        model = rng.choice(MODELS[driver])
        return f"-{model}", f'device.driver == "{driver}" && {_attr(driver, "model")} == "{model}"'
    if r < 0.8:
        ctx.tag("dra.class.int_attribute")
        cores = rng.randint(2, 4)
        return f"-{cores}c", f'device.driver == "{driver}" && {_attr(driver, "cores")} >= {cores}'
    ctx.tag("dra.class.bool_attribute")
    return "-physical", f'device.driver == "{driver}" && !{_attr(driver, "virtual")}'


def _classes(ctx: Ctx, dv: Devices, drivers: list[str]) -> None:
    rng = ctx.rng
    seen: set[str] = set()
    for driver in drivers:
        for _ in range(rng.randint(1, 3)):
            suffix, expression = _class_selector(ctx, driver)
            name = SHORT[driver] + suffix
            if name in seen:
                continue
            seen.add(name)
            selectors = [{"cel": {"expression": expression}}]
            if ctx.chance(0.15):
                # a second selector: a device must match both
                ctx.tag("dra.class.two_selectors")
                selectors = [{"cel": {"expression": f'device.driver == "{driver}"'}},
                             {"cel": {"expression": f'{_attr(driver, "cores")} > 0'}}]
            dv.add({"apiVersion": API_VERSION, "kind": "DeviceClass", "metadata": {"name": name},
                    "spec": {"selectors": selectors}})
            dv.classes.append(ClassFacts(name, driver))


def _device(ctx: Ctx, driver: str, pool: str, name: str) -> tuple[DeviceFacts, dict[str, Any]]:
    rng = ctx.rng
    facts = DeviceFacts(driver, pool, name, rng.choice(MODELS[driver]), rng.randint(1, 4), ctx.chance(0.25))
    obj = {"name": name, "attributes": {"model": {"string": facts.model}, "cores": {"int": facts.cores},
                                        "virtual": {"bool": facts.virtual}}}
    return facts, obj


def _slice(name: str, driver: str, pool: str, where: dict[str, Any], devices: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": driver, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1}}
    spec.update(where)
    spec["devices"] = devices
    return {"apiVersion": API_VERSION, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def _slices(ctx: Ctx, dv: Devices, drivers: list[str]) -> None:
    rng = ctx.rng
    for node in ctx.nodes:
        if not ctx.chance(0.85):
            continue
        for driver in drivers:
            if driver == FPGA_DRIVER or not ctx.chance(0.85):
                continue
            ctx.tag("dra.slice.node")
            devices = []
            for i in range(0 if ctx.chance(0.1) else rng.randint(1, 4)):
                facts, obj = _device(ctx, driver, node.name, f"{SHORT[driver]}-{i}")
                dv.local.setdefault(node.name, []).append(facts)
                devices.append(obj)
            dv.add(_slice(f"{node.name}-{SHORT[driver]}", driver, node.name, {"nodeName": node.name}, devices))
    if FPGA_DRIVER not in drivers:
        return
    if ctx.chance(0.5):
        ctx.tag("dra.slice.all_nodes")
        devices = [_device(ctx, FPGA_DRIVER, "fpga-shared", f"fpga-{i}")[1] for i in range(rng.randint(1, 3))]
        dv.add(_slice("fpga-shared", FPGA_DRIVER, "fpga-shared", {"allNodes": True}, devices))
        return
    for zone in sorted(rng.sample(ZONES, rng.randint(1, len(ZONES)))):
        ctx.tag("dra.slice.node_selector")
        devices = [_device(ctx, FPGA_DRIVER, f"fpga-{zone}", f"fpga-{i}")[1] for i in range(rng.randint(1, 2))]
        selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]}
        dv.add(_slice(f"fpga-{zone}", FPGA_DRIVER, f"fpga-{zone}", {"nodeSelector": selector}, devices))


def _claim_name(dv: Devices, ns: str) -> str:
    n = dv.claim_count.get(ns, 0)
    dv.claim_count[ns] = n + 1
    return f"claim-{n}"


def _use_claims(pod: dict[str, Any], claims: list[str]) -> None:
    spec = pod["spec"]
    refs = spec.setdefault("resourceClaims", [])
    start = len(refs)
    for i, claim in enumerate(claims):
        refs.append({"name": f"dev-{start + i}", "resourceClaimName": claim})
    container = spec["containers"][0]
    container.setdefault("resources", {}).setdefault("claims", []).extend(
        {"name": f"dev-{start + i}"} for i in range(len(claims)))


def _allocated_claim(ctx: Ctx, dv: Devices, pod: dict[str, Any]) -> None:
    """A claim allocated on the running pod's node and reserved for it, as kube-scheduler left it."""
    rng = ctx.rng
    node = pod["spec"]["nodeName"]
    free = [d for d in dv.local[node] if (d.driver, d.pool, d.name) not in dv.taken]
    # allocated through the class that takes any device of its driver
    classes = {c.driver: c.name for c in dv.classes if c.name == SHORT[c.driver]}
    free = [d for d in free if d.driver in classes]
    if not free:
        return
    ctx.tag("dra.claim.allocated")
    chosen = rng.sample(free, min(len(free), rng.randint(1, 2)))
    driver = chosen[0].driver
    chosen = [d for d in chosen if d.driver == driver]
    dv.taken.update((d.driver, d.pool, d.name) for d in chosen)
    ns, pod_name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    name = _claim_name(dv, ns)
    request = {"name": "req-0", "exactly": {"deviceClassName": classes[driver], "allocationMode": "ExactCount",
                                            "count": len(chosen)}}
    results = [{"request": "req-0", "driver": d.driver, "pool": d.pool, "device": d.name} for d in chosen]
    selector = {"nodeSelectorTerms": [{"matchFields": [{"key": HOSTNAME_FIELD, "operator": "In", "values": [node]}]}]}
    dv.add({"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [request]}},
            "status": {"allocation": {"devices": {"results": results}, "nodeSelector": selector},
                       "reservedFor": [{"resource": "pods", "name": pod_name,
                                        "uid": ctx.uid("Pod", ns, pod_name)}]}})
    _use_claims(pod, [name])


def _request(ctx: Ctx, dv: Devices, index: int) -> tuple[dict[str, Any], str | None]:
    """A request and the driver of its class (None for a class that does not exist)."""
    rng = ctx.rng
    name = f"req-{index}"
    if ctx.chance(0.04):
        ctx.tag("dra.claim.missing_class")
        return {"name": name, "exactly": {"deviceClassName": MISSING_CLASS}}, None
    cls = rng.choice(dv.classes)
    exactly: dict[str, Any] = {"deviceClassName": cls.name}
    if ctx.chance(0.15):
        ctx.tag("dra.claim.all")
        exactly["allocationMode"] = "All"
    else:
        ctx.tag("dra.claim.exact_count")
        exactly["allocationMode"] = "ExactCount"
        exactly["count"] = 1 if ctx.chance(0.7) else 2
    if ctx.chance(0.2):
        ctx.tag("dra.claim.selector")
        model = rng.choice(MODELS[cls.driver])
        exactly["selectors"] = [{"cel": {"expression": f'{_attr(cls.driver, "model")} != "{model}"'}}]
    return {"name": name, "exactly": exactly}, cls.driver


def _pending_claims(ctx: Ctx, dv: Devices, pod: dict[str, Any]) -> None:
    rng = ctx.rng
    ns = pod["metadata"]["namespace"]
    shareable = [name for cns, name in dv.shareable if cns == ns]
    if shareable and ctx.chance(0.3):
        ctx.tag("dra.claim.shared")
        _use_claims(pod, [rng.choice(shareable)])
        return
    if ctx.chance(0.04):
        ctx.tag("dra.claim.missing")
        _use_claims(pod, ["no-such-claim"])
        return
    claims = []
    for _ in range(1 if ctx.chance(0.8) else 2):
        name = _claim_name(dv, ns)
        requests, drivers = [], []
        for i in range(1 if ctx.chance(0.7) else 2):
            request, driver = _request(ctx, dv, i)
            requests.append(request)
            drivers.append(driver)
        devices: dict[str, Any] = {"requests": requests}
        if drivers[0] is not None and ctx.chance(0.25):
            # the same model for all of a request's devices, or for two requests of one driver
            ctx.tag("dra.claim.match_attribute")
            constraint: dict[str, Any] = {"matchAttribute": f"{drivers[0]}/model"}
            if len(requests) == 2 and drivers[0] == drivers[1]:
                constraint["requests"] = [r["name"] for r in requests]
            devices["constraints"] = [constraint]
        dv.add({"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
                "spec": {"devices": devices}})
        dv.shareable.append((ns, name))
        claims.append(name)
    ctx.tag("dra.pod.claim")
    _use_claims(pod, claims)
