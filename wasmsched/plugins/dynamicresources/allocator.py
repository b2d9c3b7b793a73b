"""The structured-parameters allocator, stable channel (dynamic-resource-allocation/structured:
allocator.go, internal/types.go, internal/stable/allocator_stable.go, pools_stable.go,
compatibility_groups.go).

Supported, as the stable allocator: ExactDeviceRequest (ExactCount / All), firstAvailable
subrequests (DRAPrioritizedList), DeviceClass and request CEL selectors, matchAttribute
constraints, adminAccess, device taints and request tolerations, partitionable devices (shared
counters, perDeviceNodeSelection), class and claim configs in the result, and the node selector of
the result. Devices with binding conditions are skipped (DeviceBindingAndStatus is not a stable
feature) and slices whose devices use compatibility groups are ignored, as kube's stable allocator
does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from wasmsched.api.gen.k8s_io.api.core.v1 import generated_pb2 as core_pb
from wasmsched.api.gen.k8s_io.api.resource.v1 import generated_pb2 as resource_pb
from wasmsched.api.nodeaffinity import NodeSelectorMatcher
from wasmsched.api.quantity import parse_quantity
from wasmsched.api.types import DeviceClass, Node, ResourceClaim, ResourceSlice
from wasmsched.plugins.dynamicresources.cel import Cache, CELRuntimeError, Device, enhance_runtime_error

ALLOCATION_RESULTS_MAX_SIZE = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"
ALLOCATION_CONFIG_SOURCE_CLASS = "FromClass"
ALLOCATION_CONFIG_SOURCE_CLAIM = "FromClaim"
TAINT_EFFECT_NO_SCHEDULE = "NoSchedule"
TAINT_EFFECT_NO_EXECUTE = "NoExecute"


@dataclass(frozen=True, slots=True)
class DeviceID:
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True, slots=True)
class PoolID:
    driver: str
    pool: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}"


@dataclass(frozen=True, slots=True)
class Features:
    """internal.Features; the defaults are the features the stable allocator supports, all on in 1.37."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = False
    compatibility_groups: bool = False


class AllocationError(Exception):
    """An error that aborts the scheduling of the pod (kube: any error but ErrFailedAllocationOnNode)."""


class FailedAllocationOnNodeError(AllocationError):
    """structured.ErrFailedAllocationOnNode: allocation may still succeed on other nodes."""


def klog_kobj(obj: Any) -> str:
    ns = obj.metadata.namespace
    return f"{ns}/{obj.metadata.name}" if ns else obj.metadata.name


def _opt_str(msg: Any, name: str) -> str:
    return getattr(msg, name) if msg.HasField(name) else ""


def _opt_bool(msg: Any, name: str) -> bool:
    return bool(getattr(msg, name)) if msg.HasField(name) else False


def node_matches(node: Node | None, node_name: str, all_nodes: bool, node_selector: Any) -> bool:
    """stable.NodeMatches."""
    if node_name:
        return node is not None and node.metadata.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        matcher = NodeSelectorMatcher.compile(node_selector)
        if matcher.errors():
            raise AllocationError(f"failed to parse node selector {node_selector}: {'; '.join(matcher.errors())}")
        return node is not None and matcher.match(node)
    return False


# --- pools --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Pool:
    id: PoolID
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""
    device_slices_targeting_node: list[ResourceSlice] = field(default_factory=list)
    device_slices_not_targeting_node: list[ResourceSlice] = field(default_factory=list)
    counter_sets: dict[str, Any] = field(default_factory=dict)


def _slice_uses_compatibility_groups(s: ResourceSlice) -> bool:
    return any(len(c.compatibilityGroups) > 0 for d in s.spec.devices for c in d.consumesCounters)


def _add_slice(pools: dict[PoolID, list[ResourceSlice]], s: ResourceSlice) -> None:
    pid = PoolID(s.spec.driver, s.spec.pool.name)
    existing = pools.get(pid)
    if existing is None:
        pools[pid] = [s]
        return
    gen = existing[0].spec.pool.generation
    if s.spec.pool.generation < gen:
        return
    if s.spec.pool.generation > gen:
        pools[pid] = [s]
        return
    existing.append(s)


def gather_pools(slices: Sequence[ResourceSlice], node: Node | None, features: Features) -> list[Pool]:
    """stable.GatherPools: the pools with devices accessible from the node, newest generation only.

    Go iterates a map here, so kube's pool order is random; this keeps the order in which pools
    first appear in `slices`, one of kube's possible orders.
    """
    pools: dict[PoolID, list[ResourceSlice]] = {}
    for s in slices:
        spec = s.spec
        if not features.partitionable_devices and (
            spec.HasField("perDeviceNodeSelection") or len(spec.sharedCounters) > 0
        ):
            continue
        if not features.compatibility_groups and _slice_uses_compatibility_groups(s):
            continue
        if len(spec.sharedCounters) > 0:
            _add_slice(pools, s)
            continue
        node_name, all_nodes = _opt_str(spec, "nodeName"), _opt_bool(spec, "allNodes")
        if node_name or all_nodes or spec.HasField("nodeSelector"):
            try:
                match = node_matches(
                    node, node_name, all_nodes, spec.nodeSelector if spec.HasField("nodeSelector") else None
                )
            except AllocationError as e:
                raise AllocationError(f"failed to perform node selection for slice {s.metadata.name}: {e}") from None
            if match:
                _add_slice(pools, s)
        elif _opt_bool(spec, "perDeviceNodeSelection"):
            for d in spec.devices:
                try:
                    match = node_matches(
                        node,
                        _opt_str(d, "nodeName"),
                        _opt_bool(d, "allNodes"),
                        d.nodeSelector if d.HasField("nodeSelector") else None,
                    )
                except AllocationError as e:
                    raise AllocationError(
                        f"failed to perform node selection for device {d.name} in slice {s.metadata.name}: {e}"
                    ) from None
                if match:
                    _add_slice(pools, s)
                    break
        # Else: some future node selection field this allocator does not know; skipped.

    result: list[Pool] = []
    for pid, for_pool in pools.items():
        count = for_pool[0].spec.pool.resourceSliceCount
        if len(for_pool) == count:
            result.append(_build_pool(pid, for_pool, features, None))
            continue
        obsolete, all_for_pool = _check_slices_in_pool(slices, pid, for_pool[0].spec.pool.generation)
        if obsolete:
            continue
        if not features.compatibility_groups:
            all_for_pool = [s for s in all_for_pool if not _slice_uses_compatibility_groups(s)]
        if len(all_for_pool) != count:
            result.append(Pool(pid, is_incomplete=True))
            continue
        result.append(_build_pool(pid, for_pool, features, all_for_pool))
    return result


def _check_slices_in_pool(
    slices: Sequence[ResourceSlice], pid: PoolID, generation: int
) -> tuple[bool, list[ResourceSlice]]:
    out: list[ResourceSlice] = []
    for s in slices:
        if s.spec.driver != pid.driver or s.spec.pool.name != pid.pool:
            continue
        if s.spec.pool.generation == generation:
            out.append(s)
        elif s.spec.pool.generation > generation:
            return True, []
    return False, out


def _validate_device_names(slices: Sequence[ResourceSlice]) -> str | None:
    seen: set[str] = set()
    for s in slices:
        for d in s.spec.devices:
            if d.name in seen:
                return f"duplicate device name {d.name}"
            seen.add(d.name)
    return None


def _validate_counter_consumption(counter_sets: dict[str, Any], slices: Sequence[ResourceSlice]) -> str | None:
    for s in slices:
        for d in s.spec.devices:
            for c in d.consumesCounters:
                cs = counter_sets.get(c.counterSet)
                if cs is None:
                    return f"counter set {c.counterSet} not found"
                for name in c.counters:
                    if name not in cs.counters:
                        return f"counter {name} not found in counter set {cs.name}"
    return None


def _build_pool(
    pid: PoolID, slices: list[ResourceSlice], features: Features, all_for_pool: list[ResourceSlice] | None
) -> Pool:
    if features.partitionable_devices:
        counter_slices = [s for s in slices if len(s.spec.sharedCounters) > 0]
        device_slices = [s for s in slices if len(s.spec.sharedCounters) == 0]
    else:
        counter_slices, device_slices = [], slices
    err = _validate_device_names(device_slices)
    if err:
        return Pool(pid, is_invalid=True, invalid_reason=err)
    if not features.partitionable_devices:
        return Pool(pid, device_slices_targeting_node=device_slices)
    counter_sets: dict[str, Any] = {}
    for s in counter_slices:
        for cs in s.spec.sharedCounters:
            if cs.name in counter_sets:
                return Pool(pid, is_invalid=True, invalid_reason=f"duplicate counter set name {cs.name}")
            counter_sets[cs.name] = cs
    err = _validate_counter_consumption(counter_sets, slices)
    if err:
        return Pool(pid, is_invalid=True, invalid_reason=err)
    if all_for_pool is None or len(slices) == len(all_for_pool):
        return Pool(pid, device_slices_targeting_node=device_slices, counter_sets=counter_sets)
    names = {s.metadata.name for s in slices}
    not_targeting = [s for s in all_for_pool if s.metadata.name not in names]
    err = _validate_counter_consumption(counter_sets, not_targeting)
    if err:
        return Pool(pid, is_invalid=True, invalid_reason=err)
    return Pool(
        pid,
        device_slices_targeting_node=device_slices,
        device_slices_not_targeting_node=not_targeting,
        counter_sets=counter_sets,
    )


# --- requests -----------------------------------------------------------------------------------


class RequestAccessor:
    """requestAccessor over an ExactDeviceRequest (with its parent request) or a DeviceSubRequest.

    An object that never went through the apiserver may lack its defaults (allocationMode
    ExactCount, count 1); they are applied here, as the apiserver would have.
    """

    __slots__ = ("_exact", "_name", "_sub")

    def __init__(self, name: str, exact: Any, is_sub: bool) -> None:
        self._name = name
        self._exact = exact
        self._sub = is_sub

    def name(self) -> str:
        return self._name

    def device_class_name(self) -> str:
        return str(self._exact.deviceClassName)

    def allocation_mode(self) -> str:
        return str(self._exact.allocationMode) or ALLOCATION_MODE_EXACT_COUNT

    def count(self) -> int:
        if self._exact.HasField("count"):
            return int(self._exact.count)
        return 1 if self.allocation_mode() == ALLOCATION_MODE_EXACT_COUNT else 0

    def admin_access(self) -> bool:
        return not self._sub and _opt_bool(self._exact, "adminAccess")

    def has_admin_access(self) -> bool:
        return not self._sub and self._exact.HasField("adminAccess")

    def selectors(self) -> Sequence[Any]:
        return self._exact.selectors  # type: ignore[no-any-return]

    def tolerations(self) -> Sequence[Any]:
        return self._exact.tolerations  # type: ignore[no-any-return]

    def derived_attributes(self) -> Sequence[Any]:
        return self._exact.derivedAttributes  # type: ignore[no-any-return]


def exact_accessor(request: Any) -> RequestAccessor:
    return RequestAccessor(request.name, request.exactly, False)


def sub_accessor(sub: Any) -> RequestAccessor:
    return RequestAccessor(sub.name, sub, True)


@dataclass(slots=True)
class _RequestData:
    request: RequestAccessor
    parent_request: RequestAccessor | None = None
    klass: DeviceClass | None = None
    num_devices: int = 0
    selected_sub_request_index: int = 0
    all_devices: list[_DeviceWithID] = field(default_factory=list)

    def request_name(self) -> str:
        if self.parent_request is not None:
            return f"{self.parent_request.name()}/{self.request.name()}"
        return self.request.name()


@dataclass(slots=True)
class _DeviceWithID:
    device: Any
    id: DeviceID
    slice: ResourceSlice
    pool: Pool


@dataclass(slots=True)
class _DeviceResult:
    device: Any
    request: str
    parent_request: str
    id: DeviceID
    slice: ResourceSlice
    admin_access: bool | None

    def request_name(self) -> str:
        return self.request if not self.parent_request else f"{self.parent_request}/{self.request}"

    def lookup_request(self, claim: ResourceClaim) -> RequestAccessor | None:
        name = self.parent_request or self.request
        for req in claim.spec.devices.requests:
            if req.name != name:
                continue
            if not self.parent_request:
                return exact_accessor(req)
            for sub in req.firstAvailable:
                if sub.name == self.request:
                    return sub_accessor(sub)
        return None


def _lookup_attribute(device: Any, device_id: DeviceID, name: str) -> Any | None:
    if name in device.attributes:
        return device.attributes[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != device_id.driver:
        return None
    if ident in device.attributes:
        return device.attributes[ident]
    return None


class _MatchAttributeConstraint:
    __slots__ = ("attribute", "attribute_name", "num_devices", "request_names")

    def __init__(self, request_names: set[str], attribute_name: str) -> None:
        self.request_names = request_names
        self.attribute_name = attribute_name
        self.attribute: Any = None
        self.num_devices = 0

    def _matches(self, request_name: str, sub_request_name: str) -> bool:
        if not sub_request_name:
            return request_name in self.request_names
        return request_name in self.request_names or f"{request_name}/{sub_request_name}" in self.request_names

    def add(self, request_name: str, sub_request_name: str, device: Any, device_id: DeviceID) -> bool:
        if self.request_names and not self._matches(request_name, sub_request_name):
            return True
        attr = _lookup_attribute(device, device_id, self.attribute_name)
        if attr is None:
            return False
        if self.num_devices == 0:
            self.attribute = attr
            self.num_devices = 1
            return True
        for kind in ("string", "int", "bool", "version"):
            if attr.HasField(kind):
                if not self.attribute.HasField(kind) or getattr(attr, kind) != getattr(self.attribute, kind):
                    return False
                break
        else:
            return False
        self.num_devices += 1
        return True

    def remove(self, request_name: str, sub_request_name: str, device: Any, device_id: DeviceID) -> None:
        if self.request_names and not self._matches(request_name, sub_request_name):
            return
        self.num_devices -= 1


def tolerates_taint(toleration: Any, taint: Any) -> bool:
    """resourceclaim.ToleratesTaint."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return bool(toleration.value == taint.value)
    return bool(toleration.operator == "Exists")


def _taint_prevents_allocation(device: Any, request: RequestAccessor) -> bool:
    for taint in device.taints:
        # Only known effects prevent allocation, others (including None) are ignored.
        if taint.effect in (TAINT_EFFECT_NO_EXECUTE, TAINT_EFFECT_NO_SCHEDULE) and not any(
            tolerates_taint(t, taint) for t in request.tolerations()
        ):
            return True
    return False


class _Stop(Exception):
    pass


class _MaxSizeExceeded(Exception):
    pass


DeviceClassGetter = Callable[[str], DeviceClass | None]


def _amount(q: Any) -> Fraction:
    return parse_quantity(q.string).amount if q.string else Fraction(0)


class Allocator:
    """stable.Allocator: built once per PreFilter, used by Filter for every node (thread-safe)."""

    def __init__(
        self,
        features: Features,
        allocated_devices: set[DeviceID],
        get_class: DeviceClassGetter,
        slices: Sequence[ResourceSlice],
        cel_cache: Cache,
    ) -> None:
        self.features = features
        self.allocated_devices = allocated_devices
        self.get_class = get_class
        self.slices = list(slices)
        self.cel_cache = cel_cache
        self._available_counters: dict[PoolID, dict[str, dict[str, Fraction]]] = {}
        self._lock = threading.Lock()
        self.num_allocate_one_invocations = 0

    def allocate(
        self, node: Node | None, claims: Sequence[ResourceClaim], deadline_check: Callable[[], str | None] | None = None
    ) -> list[Any] | None:
        """Allocate: one AllocationResult per claim, or None when the claims do not fit the node.
        Raises FailedAllocationOnNodeError or AllocationError like kube's errors."""
        return _Allocation(self, node, claims, deadline_check).run()


class _Allocation:
    def __init__(
        self,
        a: Allocator,
        node: Node | None,
        claims: Sequence[ResourceClaim],
        deadline_check: Callable[[], str | None] | None,
    ) -> None:
        self.a = a
        self.features = a.features
        self.node = node
        self.claims = list(claims)
        self.deadline_check = deadline_check
        self.device_matches_request: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.constraints: list[list[_MatchAttributeConstraint]] = [[] for _ in claims]
        self.consumed_counters: dict[PoolID, dict[str, dict[str, Fraction]]] = {}
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.result: list[list[_DeviceResult]] = [[] for _ in claims]
        self.allocating_devices: dict[DeviceID, set[int]] = {}
        self.pools: list[Pool] = []

    def run(self) -> list[Any] | None:
        try:
            self.pools = gather_pools(self.a.slices, self.node, self.features)
        except AllocationError as e:
            raise AllocationError(f"gather pool information: {e}") from None
        for ci, claim in enumerate(self.claims):
            min_per_claim = 0
            for ri, request in enumerate(claim.spec.devices.requests):
                has_sub = len(request.firstAvailable) > 0
                if not self.features.prioritized_list and has_sub:
                    raise AllocationError(
                        f"claim {klog_kobj(claim)}, request {request.name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                if has_sub:
                    min_per_request = 1 << 62
                    for si, sub in enumerate(request.firstAvailable):
                        rd = self._validate_device_request(sub_accessor(sub), exact_accessor(request), (ci, ri, si))
                        self.request_data[(ci, ri, si)] = rd
                        min_per_request = min(min_per_request, rd.num_devices)
                else:
                    rd = self._validate_device_request(exact_accessor(request), None, (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = rd
                    min_per_request = rd.num_devices
                if min_per_request > ALLOCATION_RESULTS_MAX_SIZE - min_per_claim:
                    raise AllocationError(
                        f"claim {klog_kobj(claim)}, request {request.name}: adding {min_per_request} devices exceeds "
                        f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_per_claim} already accounted for"
                    )
                min_per_claim += min_per_request
            constraints: list[_MatchAttributeConstraint] = []
            for i, c in enumerate(claim.spec.devices.constraints):
                if c.HasField("matchAttribute"):
                    constraints.append(_MatchAttributeConstraint(set(c.requests), c.matchAttribute))
                else:
                    raise AllocationError(
                        f"claim {klog_kobj(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints[ci] = constraints

        try:
            done = self._allocate_one((0, 0, 0, 0), False)
        except _Stop:
            return None
        except _MaxSizeExceeded:
            # Only possible for the first claim's own requests: kube returns the sentinel as an error.
            raise AllocationError("allocation max size exceeded") from None
        if not done:
            for pool in self.pools:
                if pool.is_invalid:
                    raise FailedAllocationOnNodeError("invalid resource pools were encountered")
            return None
        return [self._build_result(ci, claim) for ci, claim in enumerate(self.claims)]

    # PreFilter-like validation of one request or subrequest.
    def _validate_device_request(
        self, request: RequestAccessor, parent: RequestAccessor | None, key: tuple[int, int, int]
    ) -> _RequestData:
        claim = self.claims[key[0]]
        rd = _RequestData(request, parent)
        if len(request.derived_attributes()) > 0:
            raise AllocationError(
                f"claim {klog_kobj(claim)}, request {request.name()}: cannot handle request with "
                "derived attributes, the feature is disabled"
            )
        for i, sel in enumerate(request.selectors()):
            if not sel.HasField("cel"):
                raise AllocationError(
                    f"claim {klog_kobj(claim)}, request {request.name()}, selector #{i}: "
                    "CEL expression empty (unsupported selector type?)"
                )
        if not self.features.admin_access and request.has_admin_access():
            raise AllocationError(
                f"claim {klog_kobj(claim)}, request {request.name()}: admin access is requested, "
                "but the feature is disabled"
            )
        if not request.device_class_name():
            raise AllocationError(
                f"claim {klog_kobj(claim)}, request {request.name()}: missing device class name "
                "(unsupported request type?)"
            )
        klass = self.a.get_class(request.device_class_name())
        if klass is None:
            raise AllocationError(
                f"claim {klog_kobj(claim)}, request {request.name()}: could not retrieve device class "
                f'{request.device_class_name()}: deviceclass.resource.k8s.io "{request.device_class_name()}" not found'
            )
        rd.klass = klass
        mode = request.allocation_mode()
        if mode == ALLOCATION_MODE_EXACT_COUNT:
            rd.num_devices = request.count()
        elif mode == ALLOCATION_MODE_ALL:
            for pool in self.pools:
                if pool.is_incomplete:
                    raise AllocationError(
                        f"claim {klog_kobj(claim)}, request {request.name()}: asks for all devices, "
                        f"but resource pool {pool.id} is currently being updated"
                    )
                if pool.is_invalid:
                    raise AllocationError(
                        f"claim {klog_kobj(claim)}, request {request.name()}: asks for all devices, "
                        f"but resource pool {pool.id} is currently invalid"
                    )
                for s in pool.device_slices_targeting_node:
                    for di in range(len(s.spec.devices)):
                        if self._is_selectable(key, rd, s, di):
                            d = s.spec.devices[di]
                            rd.all_devices.append(
                                _DeviceWithID(d, DeviceID(s.spec.driver, s.spec.pool.name, d.name), s, pool)
                            )
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {klog_kobj(claim)}, request {request.name()}: unsupported count mode {mode}")
        return rd

    def _allocate_one(self, r: tuple[int, int, int, int], allocate_sub_request: bool) -> bool:
        """allocateOne; raises _MaxSizeExceeded for errAllocationResultMaxSizeExceeded."""
        self.a.num_allocate_one_invocations += 1
        if self.deadline_check is not None:
            cause = self.deadline_check()
            if cause is not None:
                raise AllocationError(f"filter operation aborted: {cause}")
        ci, ri, si, di = r
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.devices.requests):
            try:
                return self._allocate_one((ci + 1, 0, 0, 0), False)
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        rd = self.request_data[key]
        if not allocate_sub_request and rd.parent_request is not None:
            all_exceeded = True
            sub = 0
            while True:
                if (ci, ri, sub) not in self.request_data:
                    if all_exceeded:
                        raise _MaxSizeExceeded
                    return False
                try:
                    ok = self._allocate_one((ci, ri, sub, di), True)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.request_data[key].selected_sub_request_index = sub
                    return True
                sub += 1

        request = rd.request
        do_all = request.allocation_mode() == ALLOCATION_MODE_ALL
        if do_all and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._allocate_one((ci, ri + 1, 0, 0), False)
        remaining = rd.num_devices - di
        available = ALLOCATION_RESULTS_MAX_SIZE - len(self.result[ci])
        if remaining > available:
            raise _MaxSizeExceeded
        if do_all:
            dev = rd.all_devices[di]
            ok, undo = self._allocate_device(r, dev, True)
            if not ok or undo is None:
                return False
            try:
                done = self._allocate_one((ci, ri, si, di + 1), allocate_sub_request)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        for pool in self.pools:
            if pool.is_incomplete or pool.is_invalid:
                continue
            for s in pool.device_slices_targeting_node:
                for dev_index, d in enumerate(s.spec.devices):
                    device_id = DeviceID(pool.id.driver, pool.id.pool, d.name)
                    if request.admin_access() and ci in self.allocating_devices.get(device_id, ()):
                        continue
                    if not request.admin_access() and self._device_in_use(device_id):
                        continue
                    if not self._is_selectable(key, rd, s, dev_index):
                        continue
                    ok, undo = self._allocate_device(r, _DeviceWithID(d, device_id, s, pool), False)
                    if not ok or undo is None:
                        continue
                    try:
                        done = self._allocate_one((ci, ri, si, di + 1), allocate_sub_request)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _device_in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a.allocated_devices or bool(self.allocating_devices.get(device_id))

    def _is_selectable(self, key: tuple[int, int, int], rd: _RequestData, s: ResourceSlice, device_index: int) -> bool:
        device = s.spec.devices[device_index]
        if not self.features.device_binding_and_status and len(device.bindingConditions) > 0:
            return False
        device_id = DeviceID(s.spec.driver, s.spec.pool.name, device.name)
        mk = (device_id, *key)
        cached = self.device_matches_request.get(mk)
        if cached is not None:
            return cached
        if rd.klass is not None and not self._selectors_match(
            key, device, device_id, rd.klass, rd.klass.spec.selectors
        ):
            self.device_matches_request[mk] = False
            return False
        if not self._selectors_match(key, device, device_id, None, rd.request.selectors()):
            self.device_matches_request[mk] = False
            return False
        if _opt_bool(s.spec, "perDeviceNodeSelection") and not node_matches(
            self.node,
            _opt_str(device, "nodeName"),
            _opt_bool(device, "allNodes"),
            device.nodeSelector if device.HasField("nodeSelector") else None,
        ):
            self.device_matches_request[mk] = False
            return False
        self.device_matches_request[mk] = True
        return True

    def _selectors_match(
        self,
        key: tuple[int, int, int],
        device: Any,
        device_id: DeviceID,
        klass: DeviceClass | None,
        selectors: Sequence[Any],
    ) -> bool:
        for i, sel in enumerate(selectors):
            expr = self.a.cel_cache.get_or_compile(sel.cel.expression)
            if expr.error is not None:
                if klass is not None:
                    raise AllocationError(
                        f"class {klass.metadata.name}: selector #{i}: CEL compile error: {expr.error}"
                    )
                raise AllocationError(
                    f"claim {klog_kobj(self.claims[key[0]])}: selector #{i}: CEL compile error: {expr.error}"
                )
            try:
                matches = expr.device_matches(
                    Device(
                        device_id.driver,
                        dict(device.attributes),
                        dict(device.capacity),
                        _opt_bool(device, "allowMultipleAllocations"),
                    )
                )
            except CELRuntimeError as e:
                msg = enhance_runtime_error(str(e))
                if klass is not None:
                    raise AllocationError(
                        f"class {klass.metadata.name}: selector #{i} on device {device_id}: CEL runtime error: {msg}"
                    ) from None
                raise AllocationError(
                    f"claim {klog_kobj(self.claims[key[0]])}: selector #{i} on device {device_id}: "
                    f"CEL runtime error: {msg}"
                ) from None
            if not matches:
                return False
        return True

    def _allocate_device(
        self, r: tuple[int, int, int, int], device: _DeviceWithID, must: bool
    ) -> tuple[bool, Callable[[], None] | None]:
        ci, ri, si, _ = r
        claim = self.claims[ci]
        rd = self.request_data[(ci, ri, si)]
        request = rd.request
        if request.admin_access() and ci in self.allocating_devices.get(device.id, ()):
            return False, None
        if not request.admin_access() and self._device_in_use(device.id):
            return False, None
        if not self.features.partitionable_devices and len(device.device.consumesCounters) > 0:
            return False, None
        counters_reserved = False
        if len(device.device.consumesCounters) > 0:
            if not self._check_available_counters(device):
                return False, None
            counters_reserved = True
        if rd.parent_request is None:
            base, sub = request.name(), ""
            parent_name = ""
        else:
            parent_name = rd.parent_request.name()
            base, sub = parent_name, request.name()
        constraints_added = 0

        def rollback(result_added: bool, marked: bool, n_constraints: int, prev_results: int) -> None:
            if result_added:
                del self.result[ci][prev_results:]
            if marked:
                self.allocating_devices[device.id].discard(ci)
            for i in range(n_constraints - 1, -1, -1):
                self.constraints[ci][i].remove(base, sub, device.device, device.id)
            if counters_reserved:
                self._deallocate_counters(device)

        prev = len(self.result[ci])
        if self.features.device_taints and _taint_prevents_allocation(device.device, request):
            rollback(False, False, 0, prev)
            return False, None
        for c in self.constraints[ci]:
            if not c.add(base, sub, device.device, device.id):
                rollback(False, False, constraints_added, prev)
                if must:
                    raise AllocationError(
                        f"claim {klog_kobj(claim)}, request {request.name()}: cannot add device "
                        f"{device.id} because a claim constraint would not be satisfied"
                    )
                return False, None
            constraints_added += 1
        self.allocating_devices.setdefault(device.id, set()).add(ci)
        self.result[ci].append(
            _DeviceResult(
                device.device,
                request.name(),
                parent_name,
                device.id,
                device.slice,
                True if request.admin_access() else None,
            )
        )
        n = constraints_added
        return True, lambda: rollback(True, True, n, prev)

    def _check_available_counters(self, device: _DeviceWithID) -> bool:
        pool = device.pool
        pid = pool.id
        with self.a._lock:
            available = self.a._available_counters.get(pid)
        if available is None:
            available = {
                name: {cn: _amount(c.value) for cn, c in cs.counters.items()} for name, cs in pool.counter_sets.items()
            }
            for slices in (pool.device_slices_targeting_node, pool.device_slices_not_targeting_node):
                for s in slices:
                    for d in s.spec.devices:
                        if DeviceID(s.spec.driver, s.spec.pool.name, d.name) not in self.a.allocated_devices:
                            continue
                        for cc in d.consumesCounters:
                            for_set = available.get(cc.counterSet)
                            if for_set is None:
                                continue
                            for cn, c in cc.counters.items():
                                if cn in for_set:
                                    for_set[cn] -= _amount(c.value)
            with self.a._lock:
                self.a._available_counters[pid] = available
        consumed = self.consumed_counters.setdefault(pid, {})
        for cc in device.device.consumesCounters:
            for_set = consumed.setdefault(cc.counterSet, {})
            for cn, c in cc.counters.items():
                for_set[cn] = for_set.get(cn, Fraction(0)) + _amount(c.value)
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for cn, value in counters.items():
                if value < used.get(cn, Fraction(0)):
                    self._deallocate_counters(device)
                    return False
        return True

    def _deallocate_counters(self, device: _DeviceWithID) -> None:
        consumed = self.consumed_counters.get(device.pool.id, {})
        for cc in device.device.consumesCounters:
            for_set = consumed.setdefault(cc.counterSet, {})
            for cn, c in cc.counters.items():
                for_set[cn] = for_set.get(cn, Fraction(0)) - _amount(c.value)

    def _build_result(self, ci: int, claim: ResourceClaim) -> Any:
        out = resource_pb.AllocationResult()
        for d in self.result[ci]:
            res = out.devices.results.add()
            res.request = d.request_name()
            res.driver = d.id.driver
            res.pool = d.id.pool
            res.device = d.id.device
            if d.admin_access is not None:
                res.adminAccess = d.admin_access
            acc = d.lookup_request(claim)
            if acc is not None:
                res.tolerations.extend(acc.tolerations())
        class_ranges: dict[str, tuple[int, int]] = {}
        requests = claim.spec.devices.requests
        for ri in range(len(requests)):
            rd = self.request_data[(ci, ri, 0)]
            if rd.parent_request is not None:
                rd = self.request_data[(ci, ri, rd.selected_sub_request_index)]
            klass = rd.klass
            if klass is None:
                continue
            rng = class_ranges.get(klass.metadata.name)
            if rng is not None:
                for i in range(*rng):
                    out.devices.config[i].requests.append(rd.request_name())
                continue
            start = len(out.devices.config)
            for cfg in klass.spec.config:
                c = out.devices.config.add()
                c.source = ALLOCATION_CONFIG_SOURCE_CLASS
                c.requests.append(rd.request_name())
                c.deviceConfiguration.CopyFrom(cfg.deviceConfiguration)
            class_ranges[klass.metadata.name] = (start, len(out.devices.config))

        def selected_sub_name(ri: int) -> str | None:
            rd0 = self.request_data[(ci, ri, 0)]
            if rd0.parent_request is None:
                return None
            req = requests[ri]
            return f"{req.name}/{req.firstAvailable[rd0.selected_sub_request_index].name}"

        for claim_cfg in claim.spec.devices.config:
            if len(claim_cfg.requests) == 0:
                c = out.devices.config.add()
                c.source = ALLOCATION_CONFIG_SOURCE_CLAIM
                c.deviceConfiguration.CopyFrom(claim_cfg.deviceConfiguration)
                continue
            for ri, req in enumerate(requests):
                sub_name = selected_sub_name(ri)
                if req.name in claim_cfg.requests or (sub_name is not None and sub_name in claim_cfg.requests):
                    c = out.devices.config.add()
                    c.source = ALLOCATION_CONFIG_SOURCE_CLAIM
                    c.requests.extend(claim_cfg.requests)
                    c.deviceConfiguration.CopyFrom(claim_cfg.deviceConfiguration)
                    break
        for c in out.devices.config:
            if len(c.requests) == 0:
                continue
            applies_to_all = True
            for ri, req in enumerate(requests):
                if req.name in c.requests:
                    continue
                sub_name = selected_sub_name(ri)
                if sub_name is not None and sub_name in c.requests:
                    continue
                applies_to_all = False
                break
            if applies_to_all:
                del c.requests[:]
        ns = self._create_node_selector(self.result[ci], claim)
        if ns is not None:
            out.nodeSelector.CopyFrom(ns)
        return out

    def _create_node_selector(self, result: list[_DeviceResult], claim: ResourceClaim) -> Any | None:
        term = core_pb.NodeSelectorTerm()
        for d in result:
            spec = d.slice.spec
            if _opt_bool(spec, "perDeviceNodeSelection"):
                node_name = _opt_str(d.device, "nodeName")
                selector = d.device.nodeSelector if d.device.HasField("nodeSelector") else None
            else:
                node_name = _opt_str(spec, "nodeName")
                selector = spec.nodeSelector if spec.HasField("nodeSelector") else None
            if node_name:
                ns = core_pb.NodeSelector()
                t = ns.nodeSelectorTerms.add()
                req = t.matchFields.add()
                req.key = "metadata.name"
                req.operator = "In"
                req.values.append(node_name)
                return ns
            if selector is not None:
                n = len(selector.nodeSelectorTerms)
                if n == 1:
                    _add_new_requirements(selector.nodeSelectorTerms[0].matchFields, term.matchFields)
                    _add_new_requirements(selector.nodeSelectorTerms[0].matchExpressions, term.matchExpressions)
                elif n > 1:
                    raise AllocationError(
                        f"create NodeSelector for claim {claim.metadata.name}: unsupported "
                        f"ResourceSlice.NodeSelector with {n} terms"
                    )
        if len(term.matchFields) > 0 or len(term.matchExpressions) > 0:
            ns = core_pb.NodeSelector()
            ns.nodeSelectorTerms.add().CopyFrom(term)
            return ns
        return None


def _add_new_requirements(src: Sequence[Any], dst: Any) -> None:
    for req in src:
        values = set(req.values)
        if any(e.key == req.key and e.operator == req.operator and set(e.values) == values for e in dst):
            continue
        dst.add().CopyFrom(req)
