"""The structured-parameters allocator as kube 1.37 runs it with its default feature gates: the
incubating channel (dynamic-resource-allocation/structured: allocator.go, internal/types.go,
internal/allocatedstate.go, internal/incubating/allocator_incubating.go, pools_incubating.go,
constraint.go, consumable_capacity.go via consumable_capacity.py, compatibility_groups.go).

structured.NewAllocator picks the first channel whose supported features cover the enabled ones;
with 1.37's defaults (DRAConsumableCapacity, DRADeviceBindingConditions, DRAFractionalCapacityRange
on) that is the incubating one. Supported: ExactDeviceRequest (ExactCount / All), firstAvailable
subrequests, DeviceClass and request CEL selectors, matchAttribute and distinctAttribute
constraints, adminAccess, device taints and request tolerations, partitionable devices (shared
counters, perDeviceNodeSelection), consumable capacity (allowMultipleAllocations devices shared
between requests and claims while capacity remains, request policies, shareID and consumedCapacity
in the results), devices with binding conditions (their pools tried last, the conditions copied to
the result, bindsToNode), class and claim configs in the result, and the node selector of the
result. Pools are tried in (driver, pool) order and slices in name order, as kube sorts them.
Slices whose devices use compatibility groups (DRADeviceCompatibilityGroups, alpha, off) are
ignored, as kube does with the gate off; Features keeps the gated behaviour switchable.
"""

from __future__ import annotations

import dataclasses
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
from wasmsched.plugins.dynamicresources.consumable_capacity import (
    AllocatedState,
    CapacityError,
    ConsumedCapacityCollection,
    amounts,
    cmp_request_over_capacity,
    generate_share_id,
    get_consumed_capacity_from_request,
    has_share,
    is_device_allocated,
)

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
    """internal.Features; the defaults are kube 1.37's default feature gates (AllocatorFeatures of
    dynamicresources.go): DeviceBindingAndStatus is DRADeviceBindingConditions and
    DRAResourceClaimDeviceStatus together."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True
    fractional_capacity_range: bool = True
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


def gather_pools(
    slices_for_node: Sequence[ResourceSlice],
    node: Node | None,
    features: Features,
    all_slices: Sequence[ResourceSlice] | None = None,
) -> list[Pool]:
    """incubating.GatherPools: the pools with devices accessible from the node, newest generation
    only, sorted by (driver, pool), pools with binding conditions last. `all_slices` (default:
    `slices_for_node`) completes pools whose other slices do not target the node."""
    if all_slices is None:
        all_slices = slices_for_node
    pools: dict[PoolID, list[ResourceSlice]] = {}
    for s in slices_for_node:
        spec = s.spec
        if not features.partitionable_devices and (
            spec.HasField("perDeviceNodeSelection") or len(spec.sharedCounters) > 0
        ):
            continue
        if not features.compatibility_groups and _slice_uses_compatibility_groups(s):
            continue
        # A counter-set slice not targeting the node is fetched again below (the pool then looks
        # incomplete), as kube does.
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
    with_binding_conditions: list[Pool] = []
    for pid, for_pool in pools.items():
        count = for_pool[0].spec.pool.resourceSliceCount
        if len(for_pool) == count:
            pool = _build_pool(pid, for_pool, features, None)
        else:
            obsolete, all_for_pool = _check_slices_in_pool(all_slices, pid, for_pool[0].spec.pool.generation)
            if obsolete:
                continue
            if not features.compatibility_groups:
                all_for_pool = [s for s in all_for_pool if not _slice_uses_compatibility_groups(s)]
            if len(all_for_pool) != count:
                result.append(Pool(pid, is_incomplete=True))
                continue
            pool = _build_pool(pid, for_pool, features, all_for_pool)
        if _pool_has_binding_conditions(pool):
            with_binding_conditions.append(pool)
        else:
            result.append(pool)
    # First fit over a fixed order lets drivers prioritise through naming.
    result.sort(key=lambda p: (p.id.driver, p.id.pool))
    with_binding_conditions.sort(key=lambda p: (p.id.driver, p.id.pool))
    return result + with_binding_conditions


def _pool_has_binding_conditions(pool: Pool) -> bool:
    return any(len(d.bindingConditions) > 0 for s in pool.device_slices_targeting_node for d in s.spec.devices)


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
    slices = sorted(slices, key=lambda s: str(s.metadata.name))
    counter_slices: list[ResourceSlice] = []
    device_slices: list[ResourceSlice] = []
    not_targeting: list[ResourceSlice] = []
    for s in slices:
        if features.partitionable_devices and len(s.spec.sharedCounters) > 0:
            counter_slices.append(s)
        else:
            device_slices.append(s)
    if all_for_pool is not None and len(slices) < len(all_for_pool):
        names = {s.metadata.name for s in slices}
        for s in all_for_pool:
            if s.metadata.name in names:
                continue
            if features.partitionable_devices and len(s.spec.sharedCounters) > 0:
                counter_slices.append(s)
            else:
                not_targeting.append(s)
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
    err = _validate_counter_consumption(counter_sets, device_slices)
    if err:
        return Pool(pid, is_invalid=True, invalid_reason=err)
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

    def capacities(self) -> Any | None:
        """The CapacityRequirements, None when unset."""
        return self._exact.capacity if self._exact.HasField("capacity") else None


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
    share_id: str | None = None
    consumed_capacity: dict[str, str] | None = None

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


_ATTRIBUTE_KINDS = ("string", "int", "bool", "version")


class _DistinctAttributeConstraint(_MatchAttributeConstraint):
    """incubating distinctAttributeConstraint: every device must have the attribute, all values distinct."""

    __slots__ = ("attributes",)

    def __init__(self, request_names: set[str], attribute_name: str) -> None:
        super().__init__(request_names, attribute_name)
        self.attributes: list[Any] = []

    def add(self, request_name: str, sub_request_name: str, device: Any, device_id: DeviceID) -> bool:
        if self.request_names and not self._matches(request_name, sub_request_name):
            return True
        attr = _lookup_attribute(device, device_id, self.attribute_name)
        if attr is None or not self._distinct(attr):
            return False
        self.attributes.append(attr)
        return True

    def remove(self, request_name: str, sub_request_name: str, device: Any, device_id: DeviceID) -> None:
        if self.request_names and not self._matches(request_name, sub_request_name):
            return
        self.attributes.pop()

    def _distinct(self, attr: Any) -> bool:
        if not self.attributes:
            return True
        kind = next((k for k in _ATTRIBUTE_KINDS if attr.HasField(k)), None)
        if kind is None:
            return False
        return not any(a.HasField(kind) and getattr(a, kind) == getattr(attr, kind) for a in self.attributes)


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


@dataclass(slots=True)
class _RollbackState:
    """deviceRollbackState: what one allocateDevice changed, for its undo."""

    counters_reserved: bool = False
    constraints_added: int = 0
    device_marked: bool = False
    capacity_entry_existed: bool = False
    result_added: bool = False
    previous_num_results: int = 0
    consumed_capacity: dict[str, Fraction] | None = None


class _Stop(Exception):
    pass


class _MaxSizeExceeded(Exception):
    pass


DeviceClassGetter = Callable[[str], DeviceClass | None]


def _amount(q: Any) -> Fraction:
    return parse_quantity(q.string).amount if q.string else Fraction(0)


class Allocator:
    """incubating.Allocator: built once per PreFilter, used by Filter for every node (thread-safe).

    `allocated` is the AllocatedState, or just the set of dedicated devices."""

    def __init__(
        self,
        features: Features,
        allocated: AllocatedState | set[DeviceID],
        get_class: DeviceClassGetter,
        slices: Sequence[ResourceSlice],
        cel_cache: Cache,
    ) -> None:
        self.features = features
        if not isinstance(allocated, AllocatedState):
            allocated = AllocatedState(allocated_devices=set(allocated))
        self.allocated_state = allocated
        self.allocated_devices = allocated.allocated_devices
        self.get_class = get_class
        self.slices = list(slices)
        # Slices are split once so that each node only looks at its own and the shared ones.
        self.slices_on_node: dict[str, list[ResourceSlice]] = {}
        self.slices_shared: list[ResourceSlice] = []
        for sl in self.slices:
            node_name = _opt_str(sl.spec, "nodeName")
            if node_name:
                self.slices_on_node.setdefault(node_name, []).append(sl)
            else:
                self.slices_shared.append(sl)
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
        # Capacity newly consumed on shared devices by this attempt (allocatingCapacity).
        self.allocating_capacity = ConsumedCapacityCollection()
        self.pools: list[Pool] = []

    def run(self) -> list[Any] | None:
        node_name = self.node.metadata.name if self.node is not None else ""
        slices_for_node = self.a.slices_on_node.get(node_name, []) + self.a.slices_shared
        try:
            self.pools = gather_pools(slices_for_node, self.node, self.features, self.a.slices)
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
                if not self.features.consumable_capacity:
                    if request.HasField("exactly") and request.exactly.HasField("capacity"):
                        raise AllocationError(
                            f"claim {klog_kobj(claim)}, request {request.name}: has capacity requests, "
                            "but the DRAConsumableCapacity feature is disabled"
                        )
                    for sub in request.firstAvailable:
                        if sub.HasField("capacity"):
                            raise AllocationError(
                                f"claim {klog_kobj(claim)}, subrequest {sub.name}: has capacity requests, "
                                "but the DRAConsumableCapacity feature is disabled"
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
                elif c.HasField("distinctAttribute"):
                    constraints.append(_DistinctAttributeConstraint(set(c.requests), c.distinctAttribute))
                else:
                    raise AllocationError(
                        f"claim {klog_kobj(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints[ci] = constraints

        try:
            done = self._allocate_one((0, 0, 0, 0), False, (0, 0, 0))
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
                            # Static capacity only: what others consume is checked when allocating,
                            # so a matching device blocked by other shares makes "All" fail.
                            if self.features.consumable_capacity and not self._fits_capacity(
                                claim, request, d, d.name, {}, None
                            ):
                                continue
                            rd.all_devices.append(
                                _DeviceWithID(d, DeviceID(s.spec.driver, s.spec.pool.name, d.name), s, pool)
                            )
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {klog_kobj(claim)}, request {request.name()}: unsupported count mode {mode}")
        return rd

    def _allocate_one(
        self, r: tuple[int, int, int, int], allocate_sub_request: bool, start: tuple[int, int, int] = (0, 0, 0)
    ) -> bool:
        """allocateOne; raises _MaxSizeExceeded for errAllocationResultMaxSizeExceeded.

        `start` (pool, slice, device index) is where the search for the next device of the same
        request resumes: the devices of one request are tried as combinations, not permutations."""
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
                return self._allocate_one((ci + 1, 0, 0, 0), False, (0, 0, 0))
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
                    ok = self._allocate_one((ci, ri, sub, di), True, (0, 0, 0))
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
            return self._allocate_one((ci, ri + 1, 0, 0), False, (0, 0, 0))
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
                done = self._allocate_one((ci, ri, si, di + 1), allocate_sub_request, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        for pool_index in range(start[0], len(self.pools)):
            pool = self.pools[pool_index]
            if pool.is_incomplete or pool.is_invalid:
                continue
            slices = pool.device_slices_targeting_node
            slice_start = start[1] if pool_index == start[0] else 0
            for slice_index in range(slice_start, len(slices)):
                s = slices[slice_index]
                devices = s.spec.devices
                device_start = start[2] if pool_index == start[0] and slice_index == start[1] else 0
                for dev_index in range(device_start, len(devices)):
                    d = devices[dev_index]
                    device_id = DeviceID(pool.id.driver, pool.id.pool, d.name)
                    if request.admin_access() and ci in self.allocating_devices.get(device_id, ()):
                        continue
                    if not request.admin_access() and self._device_in_use(device_id):
                        continue
                    if not self._is_selectable(key, rd, s, dev_index):
                        continue
                    if self.features.consumable_capacity and not self._fits_capacity(
                        claim,
                        request,
                        d,
                        device_id,
                        self._allocated_capacity(device_id),
                        self.allocating_capacity.get(device_id),
                    ):
                        continue
                    ok, undo = self._allocate_device(r, _DeviceWithID(d, device_id, s, pool), False)
                    if not ok or undo is None:
                        continue
                    try:
                        done = self._allocate_one(
                            (ci, ri, si, di + 1), allocate_sub_request, (pool_index, slice_index, dev_index + 1)
                        )
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _allocated_capacity(self, device_id: DeviceID) -> dict[str, Fraction]:
        return self.a.allocated_state.aggregated_capacity.get(device_id, {})

    def _fits_capacity(
        self,
        claim: ResourceClaim,
        request: RequestAccessor,
        device: Any,
        device_name: object,
        current: dict[str, Fraction],
        allocating: dict[str, Fraction] | None,
        verb: str = "checking",
    ) -> bool:
        """CmpRequestOverCapacity with kube's wrapping of its fatal errors."""
        try:
            return cmp_request_over_capacity(
                current, request.capacities(), device.capacity, allocating, self.features.fractional_capacity_range
            )
        except CapacityError as e:
            raise AllocationError(
                f"claim {klog_kobj(claim)}, request {request.name()}: {verb} capacity for device {device_name}: {e}"
            ) from None

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
        allow_multiple = self.features.consumable_capacity and _opt_bool(device.device, "allowMultipleAllocations")
        if not allow_multiple and request.admin_access() and ci in self.allocating_devices.get(device.id, ()):
            return False, None
        if not request.admin_access() and self._device_in_use(device.id):
            return False, None
        if not self.features.partitionable_devices and len(device.device.consumesCounters) > 0:
            return False, None
        # A further share of a shared device in use must not charge its counters again.
        skip_counter_check = allow_multiple and self._device_capacity_in_use(device.id)
        counters_reserved = False
        if not skip_counter_check and len(device.device.consumesCounters) > 0:
            if not self._check_available_counters(device):
                return False, None
            counters_reserved = True
        if rd.parent_request is None:
            base, sub = request.name(), ""
            parent_name = ""
        else:
            parent_name = rd.parent_request.name()
            base, sub = parent_name, request.name()
        st = _RollbackState(counters_reserved=counters_reserved, previous_num_results=len(self.result[ci]))

        def rollback(state: _RollbackState) -> None:
            if state.result_added:
                del self.result[ci][state.previous_num_results :]
            if state.consumed_capacity is not None:
                self.allocating_capacity.remove(device.id, state.consumed_capacity)
                # The entry doubles as the "already shared" marker an earlier share relies on.
                if state.capacity_entry_existed and device.id not in self.allocating_capacity:
                    self.allocating_capacity[device.id] = {}
            if state.device_marked:
                self.allocating_devices[device.id].discard(ci)
            for i in range(state.constraints_added - 1, -1, -1):
                self.constraints[ci][i].remove(base, sub, device.device, device.id)
            if state.counters_reserved:
                self._deallocate_counters(device)

        if self.features.device_taints and _taint_prevents_allocation(device.device, request):
            rollback(st)
            return False, None
        for c in self.constraints[ci]:
            if not c.add(base, sub, device.device, device.id):
                rollback(st)
                if must:
                    raise AllocationError(
                        f"claim {klog_kobj(claim)}, request {request.name()}: cannot add device "
                        f"{device.id} because a claim constraint would not be satisfied"
                    )
                return False, None
            st.constraints_added += 1
        if not allow_multiple:
            self.allocating_devices.setdefault(device.id, set()).add(ci)
            st.device_marked = True
        consumed: dict[str, Any] = {}
        share_id: str | None = None
        if self.features.consumable_capacity:
            try:
                fits = self._fits_capacity(
                    claim,
                    request,
                    device.device,
                    device.id,
                    self._allocated_capacity(device.id),
                    self.allocating_capacity.get(device.id),
                    "rechecking",
                )
            except AllocationError:
                rollback(st)
                raise
            if not fits:
                rollback(st)
                return False, None
            if allow_multiple:
                try:
                    consumed = get_consumed_capacity_from_request(
                        request.capacities(), device.device.capacity, self.features.fractional_capacity_range
                    )
                except CapacityError as e:
                    rollback(st)
                    raise AllocationError(
                        f"claim {klog_kobj(claim)}, request {request.name()}: computing consumed capacity "
                        f"for device {device.id}: {e}"
                    ) from None
                share_id = generate_share_id()
                st.capacity_entry_existed = device.id in self.allocating_capacity
                consumed_amounts = amounts(consumed)
                self.allocating_capacity.insert(device.id, consumed_amounts)
                st.consumed_capacity = consumed_amounts
        self.result[ci].append(
            _DeviceResult(
                device.device,
                request.name(),
                parent_name,
                device.id,
                device.slice,
                True if request.admin_access() else None,
                share_id,
                {name: str(qty) for name, qty in consumed.items()} if consumed else None,
            )
        )
        st.result_added = True
        undo = dataclasses.replace(st)
        return True, lambda: rollback(undo)

    def _device_capacity_in_use(self, device_id: DeviceID) -> bool:
        """deviceCapacityInUse: some share of the device exists, allocated or being allocated."""
        state = self.a.allocated_state
        if device_id in state.aggregated_capacity or has_share(device_id, state):
            return True
        return device_id in self.allocating_capacity

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
                        if not is_device_allocated(
                            DeviceID(s.spec.driver, s.spec.pool.name, d.name), self.a.allocated_state
                        ):
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
            if d.share_id is not None:
                res.shareID = d.share_id
            if d.consumed_capacity is not None:
                for name, value in d.consumed_capacity.items():
                    res.consumedCapacity[name].string = value
            if self.features.device_binding_and_status:
                res.bindingConditions.extend(d.device.bindingConditions)
                res.bindingFailureConditions.extend(d.device.bindingFailureConditions)
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
        ns = self._create_node_selector(self.result[ci], claim, self.node.metadata.name if self.node else "")
        if ns is not None:
            out.nodeSelector.CopyFrom(ns)
        return out

    def _create_node_selector(
        self, result: list[_DeviceResult], claim: ResourceClaim, target_node_name: str
    ) -> Any | None:
        term = core_pb.NodeSelectorTerm()
        for d in result:
            spec = d.slice.spec
            if _opt_bool(spec, "perDeviceNodeSelection"):
                node_name = _opt_str(d.device, "nodeName")
                selector = d.device.nodeSelector if d.device.HasField("nodeSelector") else None
            else:
                node_name = _opt_str(spec, "nodeName")
                selector = spec.nodeSelector if spec.HasField("nodeSelector") else None
            if node_name or _opt_bool(d.device, "bindsToNode"):
                # Local to one node, or binds to the node it is allocated for.
                ns = core_pb.NodeSelector()
                t = ns.nodeSelectorTerms.add()
                req = t.matchFields.add()
                req.key = "metadata.name"
                req.operator = "In"
                req.values.append(target_node_name)
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
