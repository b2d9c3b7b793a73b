"""Random devices for differential cases (dynamic resource allocation, resource.k8s.io/v1): DeviceClasses,
ResourceSlices and ResourceClaims, and pods that use the claims, for the DynamicResources plugin.

The devices come from their own random source (seeded by the case's seed), drawn after everything else
(storage included), so a seed without devices gives the same case as before devices existed.

Claims are created as objects and named by pods with resourceClaimName: neither side runs the
resourceclaim controller that would make claims from templates. Some claims are already allocated to and
reserved for a running pod on its node (their devices are taken, or a share of a device that allows
several allocations); some pending pods share one claim.

kube 1.37's (incubating) allocator keeps the first allocation that fits, trying the pools a node sees
sorted by (driver, pool name) and a pool's slices sorted by slice name, a slice's devices in their order
(dynamic-resource-allocation's structured/internal/incubating/pools_incubating.go): the device a claim
gets does not depend on map order, so the case may give a node several pools of one driver and split a
pool over several slices. Pools: per-node pools (spec.nodeName, pool name = node name) of two drivers,
sometimes split over two or three slices with the devices spread over them, sometimes with a slice of an
older generation (ignored), sometimes incomplete (a slice missing: allocation skips the pool, `All` fails
with an error) or invalid (a device name twice: allocation on the node fails); for the GPU driver also a
pool for all nodes and pools per zone beside the node's own; for the third driver either one pool for all
nodes or one pool per zone (spec.nodeSelector on the zone label). Some GPU pools are partitionable: a
counter slice (sharedCounters) whose counters the devices consume (consumesCounters). Classes select one
driver's devices, devices of two drivers, or every device.

Devices may allow several allocations (allowMultipleAllocations) with a `memory` capacity, with or without
a requestPolicy (default only, validRange min/max/step, validValues); requests may ask for capacity
(capacity.requests), which a device without that capacity cannot give. The shareID the allocator picks is
random on both sides; nothing compared depends on it (it is not in a message or score). Devices may carry
taints (NoSchedule, NoExecute) that requests tolerate or not. Requests are `exactly` or `firstAvailable`
(two or three subrequests: DynamicResources' Score depends on the one chosen); constraints are
matchAttribute and distinctAttribute.

Every device of a driver has every attribute that driver's selectors name, and a selector that names a
driver's attribute in a class or request that may see other drivers' devices checks `device.driver` first
(`&&` does not evaluate its right side then), so CEL never looks up a missing attribute (cel-go's and
cel-python's runtime errors are worded differently). Quantities are whole numbers of Gi (the fractional
capacity-range arithmetic is not exercised). Not generated: binding conditions (kube's PreBind would poll
in real time), admin access, templates, DeviceTaintRules, per-device node selection, extended resources.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from tests.differential.context import ZONE, ZONES, Ctx

API_VERSION = "resource.k8s.io/v1"
GPU_DRIVER = "gpu.example.com"
NIC_DRIVER = "nic.example.com"
FPGA_DRIVER = "fpga.example.com"  # network-attached: pools for all nodes or a zone
NODE_LOCAL_DRIVERS = (GPU_DRIVER, NIC_DRIVER)
MODELS = {GPU_DRIVER: ("a100", "h100"), NIC_DRIVER: ("cx6", "cx7"), FPGA_DRIVER: ("u250", "u280")}
SHORT = {GPU_DRIVER: "gpu", NIC_DRIVER: "nic", FPGA_DRIVER: "fpga"}
MISSING_CLASS = "tpu"  # a class no case declares
HOSTNAME_FIELD = "metadata.name"
CAPACITY = "memory"  # the consumable capacity of GPU and FPGA devices
COUNTER_SET = "gpu-mem"
TAINT_KEY = "example.com/health"
TAINT_VALUES = ("degraded", "failed")
TAINT_EFFECTS = ("NoSchedule", "NoExecute")
# in Gi
REQUESTED_CAPACITY = (2, 6, 8, 10, 16, 24, 48)
# a pool name sorting before and one sorting after the node names (node-N)
GPU_SHARED_POOLS = ("gpu-shared", "shared-gpu")


@dataclass
class DeviceFacts:
    driver: str
    pool: str
    name: str
    model: str
    cores: int
    virtual: bool
    multi: bool = False  # allowMultipleAllocations
    capacity: int = 0  # Gi of `memory`
    consumes: int = 0  # Gi an allocation takes from the device's capacity (multi) when none is requested
    used: int = 0  # Gi taken by the allocated claims the case made


@dataclass
class ClassFacts:
    name: str
    drivers: tuple[str, ...]


@dataclass
class Devices:
    by_kind: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    classes: list[ClassFacts] = field(default_factory=list)
    # devices of complete, valid node-local pools, by node
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
            dv.classes.append(ClassFacts(name, (driver,)))
    if len(drivers) > 1 and ctx.chance(0.4):
        # devices of two drivers: which one a request gets is decided by the pools' order
        ctx.tag("dra.class.multi_driver")
        two = sorted(rng.sample(drivers, 2))
        expression = " || ".join(f'device.driver == "{d}"' for d in two)
        if ctx.chance(0.5):
            # an attribute of one driver, looked up only for its devices
            first = f'device.driver == "{two[0]}" && {_attr(two[0], "cores")} >= 2'
            expression = f'({first}) || device.driver == "{two[1]}"'
        dv.add({"apiVersion": API_VERSION, "kind": "DeviceClass", "metadata": {"name": "accel"},
                "spec": {"selectors": [{"cel": {"expression": expression}}]}})
        dv.classes.append(ClassFacts("accel", tuple(two)))
    if ctx.chance(0.15):
        ctx.tag("dra.class.any")
        dv.add({"apiVersion": API_VERSION, "kind": "DeviceClass", "metadata": {"name": "any"}, "spec": {}})
        dv.classes.append(ClassFacts("any", tuple(drivers)))


def _gi(n: int) -> str:
    return f"{n}Gi"


def _capacity(ctx: Ctx, facts: DeviceFacts, obj: dict[str, Any]) -> None:
    """A `memory` capacity; a device allowing several allocations may have a request policy."""
    rng = ctx.rng
    value = rng.choice((16, 40))
    cap: dict[str, Any] = {"value": _gi(value)}
    facts.capacity = facts.consumes = value
    if ctx.chance(0.3):
        ctx.tag("dra.device.multi_allocation")
        facts.multi = True
        obj["allowMultipleAllocations"] = True
        r = rng.random()
        if r < 0.25:
            ctx.tag("dra.device.policy_none")
        elif r < 0.45:
            ctx.tag("dra.device.policy_default")
            facts.consumes = rng.choice((4, 8))
            cap["requestPolicy"] = {"default": _gi(facts.consumes)}
        elif r < 0.75:
            ctx.tag("dra.device.policy_range")
            step = rng.choice((2, 4))
            low = step * rng.randint(1, 2)
            facts.consumes = low + step * rng.randint(0, 2)
            valid_range: dict[str, str] = {"min": _gi(low), "step": _gi(step)}
            if ctx.chance(0.6):
                valid_range["max"] = _gi(low + step * ((value - low) // step // 2))
                facts.consumes = min(facts.consumes, low + step * ((value - low) // step // 2))
            if ctx.chance(0.2):
                del valid_range["step"]
            cap["requestPolicy"] = {"default": _gi(facts.consumes), "validRange": valid_range}
        else:
            ctx.tag("dra.device.policy_values")
            values = [v for v in (4, 8, 12, 16, 32) if v <= value]
            values = sorted(rng.sample(values, rng.randint(1, 3)))
            facts.consumes = rng.choice(values)
            cap["requestPolicy"] = {"default": _gi(facts.consumes), "validValues": [_gi(v) for v in values]}
    obj["capacity"] = {CAPACITY: cap}


def _device(ctx: Ctx, driver: str, pool: str, name: str) -> tuple[DeviceFacts, dict[str, Any]]:
    rng = ctx.rng
    facts = DeviceFacts(driver, pool, name, rng.choice(MODELS[driver]), rng.randint(1, 4), ctx.chance(0.25))
    obj: dict[str, Any] = {"name": name, "attributes": {"model": {"string": facts.model},
                                                        "cores": {"int": facts.cores},
                                                        "virtual": {"bool": facts.virtual}}}
    if driver != NIC_DRIVER and ctx.chance(0.6):
        _capacity(ctx, facts, obj)
    if ctx.chance(0.1):
        ctx.tag("dra.device.taint")
        obj["taints"] = [{"key": TAINT_KEY, "value": rng.choice(TAINT_VALUES), "effect": rng.choice(TAINT_EFFECTS)}]
    return facts, obj


@dataclass
class _Slice:
    name: str
    devices: list[dict[str, Any]] = field(default_factory=list)
    counters: list[dict[str, Any]] | None = None


def _publish(ctx: Ctx, dv: Devices, driver: str, pool: str, where: dict[str, Any],
             slices: list[_Slice]) -> bool:
    """The pool's ResourceSlices; False when the case made the pool unusable (incomplete or invalid)."""
    rng = ctx.rng
    generation = 1
    if ctx.chance(0.08):
        # a slice of an older generation, which the allocator ignores
        ctx.tag("dra.slice.outdated")
        generation = 2
        old = {"name": f"{SHORT[driver]}-old", "attributes": {"model": {"string": MODELS[driver][0]},
                                                             "cores": {"int": 4}, "virtual": {"bool": False}}}
        dv.add(_slice_obj(f"{pool}-old", driver, pool, 1, 1, where, [old], None))
    usable = True
    count = len(slices)
    devices = [d for s in slices for d in s.devices]
    device_slices = [s for s in slices if s.counters is None]
    if len(device_slices) > 1 and devices and ctx.chance(0.06):
        ctx.tag("dra.slice.invalid")
        dup = dict(rng.choice(devices))
        holder = next(s for s in device_slices if dup not in s.devices)
        holder.devices.append(dup)
        usable = False
    if count > 1 and ctx.chance(0.08):
        ctx.tag("dra.slice.incomplete")
        dropped = rng.choice(slices)
        slices = [s for s in slices if s is not dropped]
        usable = False
    for s in slices:
        dv.add(_slice_obj(s.name, driver, pool, generation, count, where, s.devices, s.counters))
    return usable


def _slice_obj(name: str, driver: str, pool: str, generation: int, count: int, where: dict[str, Any],
               devices: list[dict[str, Any]], counters: list[dict[str, Any]] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": driver,
                            "pool": {"name": pool, "generation": generation, "resourceSliceCount": count}}
    spec.update(where)
    if counters is not None:
        spec["sharedCounters"] = counters
    else:
        spec["devices"] = devices
    return {"apiVersion": API_VERSION, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def _pool(ctx: Ctx, dv: Devices, driver: str, pool: str, where: dict[str, Any], slice_name: str,
          sizes: tuple[int, int], node: str | None = None) -> None:
    """A pool of random devices, on one slice or spread over several (named slice_name-N)."""
    rng = ctx.rng
    n = 0 if ctx.chance(0.1) else rng.randint(*sizes)
    facts, objs = [], []
    for i in range(n):
        f, obj = _device(ctx, driver, pool, f"{SHORT[driver]}-{i}")
        facts.append(f)
        objs.append(obj)
    parts = 1 if n < 2 or not ctx.chance(0.3) else rng.randint(2, 3)
    if parts == 1:
        slices = [_Slice(slice_name, objs)]
    else:
        ctx.tag("dra.slice.several")
        slices = [_Slice(f"{slice_name}-{j}") for j in range(parts)]
        for obj in objs:
            rng.choice(slices).devices.append(obj)
    if driver == GPU_DRIVER and n and ctx.chance(0.2):
        # partitionable: the devices share the counters of one counter set
        ctx.tag("dra.slice.counters")
        total = rng.choice((8, 16))
        slices.append(_Slice(f"{slice_name}-counters",
                             counters=[{"name": COUNTER_SET, "counters": {CAPACITY: {"value": _gi(total)}}}]))
        for f, obj in zip(facts, objs, strict=True):
            if f.multi:
                continue
            obj["consumesCounters"] = [{"counterSet": COUNTER_SET,
                                        "counters": {CAPACITY: {"value": _gi(rng.choice((4, 8)))}}}]
    usable = _publish(ctx, dv, driver, pool, where, slices)
    if node is not None:
        dv.local.setdefault(node, [])
        if usable:
            dv.local[node].extend(facts)


def _zone_selector(zone: str) -> dict[str, Any]:
    return {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": ZONE, "operator": "In", "values": [zone]}]}]}}


def _slices(ctx: Ctx, dv: Devices, drivers: list[str]) -> None:
    rng = ctx.rng
    for node in ctx.nodes:
        if not ctx.chance(0.85):
            continue
        for driver in drivers:
            if driver == FPGA_DRIVER or not ctx.chance(0.85):
                continue
            ctx.tag("dra.slice.node")
            _pool(ctx, dv, driver, node.name, {"nodeName": node.name}, f"{node.name}-{SHORT[driver]}", (1, 4),
                  node=node.name)
    if ctx.chance(0.3):
        # GPU pools beside the nodes' own: a node sees several pools of the driver
        ctx.tag("dra.slice.several_pools")
        if ctx.chance(0.6):
            pool = rng.choice(GPU_SHARED_POOLS)
            _pool(ctx, dv, GPU_DRIVER, pool, {"allNodes": True}, pool, (1, 2))
        else:
            for zone in sorted(rng.sample(ZONES, rng.randint(1, 2))):
                _pool(ctx, dv, GPU_DRIVER, f"gpu-{zone}", _zone_selector(zone), f"gpu-{zone}", (1, 2))
    if FPGA_DRIVER not in drivers:
        return
    if ctx.chance(0.5):
        ctx.tag("dra.slice.all_nodes")
        _pool(ctx, dv, FPGA_DRIVER, "fpga-shared", {"allNodes": True}, "fpga-shared", (1, 3))
        return
    for zone in sorted(rng.sample(ZONES, rng.randint(1, len(ZONES)))):
        ctx.tag("dra.slice.node_selector")
        _pool(ctx, dv, FPGA_DRIVER, f"fpga-{zone}", _zone_selector(zone), f"fpga-{zone}", (1, 2))


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


def _share_id(ctx: Ctx) -> str:
    h = f"{ctx.rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _allocated_claim(ctx: Ctx, dv: Devices, pod: dict[str, Any]) -> None:
    """A claim allocated on the running pod's node and reserved for it, as kube-scheduler left it."""
    rng = ctx.rng
    node = pod["spec"]["nodeName"]
    free = [d for d in dv.local[node] if (d.driver, d.pool, d.name) not in dv.taken
            and (not d.multi or d.used + d.consumes <= d.capacity)]
    # allocated through the class that takes any device of its driver
    classes = {c.drivers[0]: c.name for c in dv.classes if c.name == SHORT[c.drivers[0]]}
    free = [d for d in free if d.driver in classes]
    if not free:
        return
    ctx.tag("dra.claim.allocated")
    chosen = rng.sample(free, min(len(free), rng.randint(1, 2)))
    driver = chosen[0].driver
    chosen = [d for d in chosen if d.driver == driver]
    dv.taken.update((d.driver, d.pool, d.name) for d in chosen if not d.multi)
    for d in chosen:
        d.used += d.consumes
    ns, pod_name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    name = _claim_name(dv, ns)
    request = {"name": "req-0", "exactly": {"deviceClassName": classes[driver], "allocationMode": "ExactCount",
                                            "count": len(chosen)}}
    results = []
    for d in chosen:
        result: dict[str, Any] = {"request": "req-0", "driver": d.driver, "pool": d.pool, "device": d.name}
        if d.multi:
            # a share of the device: others may still be allocated while its capacity lasts
            ctx.tag("dra.claim.allocated_share")
            result["shareID"] = _share_id(ctx)
            result["consumedCapacity"] = {CAPACITY: _gi(d.consumes)}
        results.append(result)
    selector = {"nodeSelectorTerms": [{"matchFields": [{"key": HOSTNAME_FIELD, "operator": "In", "values": [node]}]}]}
    dv.add({"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [request]}},
            "status": {"allocation": {"devices": {"results": results}, "nodeSelector": selector},
                       "reservedFor": [{"resource": "pods", "name": pod_name,
                                        "uid": ctx.uid("Pod", ns, pod_name)}]}})
    _use_claims(pod, [name])


def _toleration(ctx: Ctx) -> dict[str, Any]:
    rng = ctx.rng
    toleration: dict[str, Any] = {"key": TAINT_KEY}
    if ctx.chance(0.5):
        toleration["operator"] = "Exists"
    else:
        toleration["operator"] = "Equal"
        toleration["value"] = rng.choice(TAINT_VALUES)
    if ctx.chance(0.6):
        toleration["effect"] = rng.choice(TAINT_EFFECTS)
    return toleration


def _exact(ctx: Ctx, dv: Devices) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The fields of an exact request (or subrequest) and the drivers of its class (none for a class that
    does not exist)."""
    rng = ctx.rng
    if ctx.chance(0.04):
        ctx.tag("dra.claim.missing_class")
        return {"deviceClassName": MISSING_CLASS, "allocationMode": "ExactCount", "count": 1}, ()
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
        driver = rng.choice(cls.drivers)
        model = rng.choice(MODELS[driver])
        expression = f'{_attr(driver, "model")} != "{model}"'
        if len(cls.drivers) > 1:
            expression = f'device.driver == "{driver}" && {expression}'
        exactly["selectors"] = [{"cel": {"expression": expression}}]
    if ctx.chance(0.15):
        ctx.tag("dra.claim.capacity")
        exactly["capacity"] = {"requests": {CAPACITY: _gi(rng.choice(REQUESTED_CAPACITY))}}
    if ctx.chance(0.15):
        ctx.tag("dra.claim.toleration")
        exactly["tolerations"] = [_toleration(ctx) for _ in range(1 if ctx.chance(0.8) else 2)]
    return exactly, cls.drivers


def _request(ctx: Ctx, dv: Devices, index: int) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A request and the drivers of its (first) class."""
    rng = ctx.rng
    name = f"req-{index}"
    if ctx.chance(0.2):
        # the first subrequest that can be satisfied; Score prefers nodes that give an earlier one
        ctx.tag("dra.claim.first_available")
        subs: list[dict[str, Any]] = []
        first: tuple[str, ...] = ()
        for j in range(rng.randint(2, 3)):
            sub, drivers = _exact(ctx, dv)
            subs.append({"name": f"s{j}", **sub})
            if j == 0:
                first = drivers
        return {"name": name, "firstAvailable": subs}, first
    exactly, drivers = _exact(ctx, dv)
    return {"name": name, "exactly": exactly}, drivers


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
            request, request_drivers = _request(ctx, dv, i)
            requests.append(request)
            drivers.append(request_drivers)
        devices: dict[str, Any] = {"requests": requests}
        if drivers[0] and ctx.chance(0.3):
            driver = rng.choice(drivers[0])
            constraint: dict[str, Any]
            if ctx.chance(0.75):
                # the same model for all of a request's devices, or for two requests of one driver
                ctx.tag("dra.claim.match_attribute")
                constraint = {"matchAttribute": f"{driver}/model"}
            else:
                ctx.tag("dra.claim.distinct_attribute")
                constraint = {"distinctAttribute": f"{driver}/model"}
            if len(requests) == 2 and driver in drivers[1]:
                constraint["requests"] = [r["name"] for r in requests]
            devices["constraints"] = [constraint]
        dv.add({"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
                "spec": {"devices": devices}})
        dv.shareable.append((ns, name))
        claims.append(name)
    ctx.tag("dra.pod.claim")
    _use_claims(pod, claims)
