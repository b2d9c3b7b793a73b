"""The object generators and the runner of dynamic-resource-allocation/structured/internal/allocatortesting/
allocator_testing.go, with Go's names, so that its test table reads the same in
dra_allocatortesting_cases.py (translated from it)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any

from wasmsched.api import types as api
from wasmsched.api.gen.k8s_io.api.core.v1 import generated_pb2 as core_pb
from wasmsched.api.gen.k8s_io.api.resource.v1 import generated_pb2 as resource_pb
from wasmsched.api.quantity import BINARY_SI, DECIMAL_SI, Quantity, parse_quantity
from wasmsched.api.types import Node, ResourceClaim, ResourceSlice
from wasmsched.plugins.dynamicresources import allocator as alloc
from wasmsched.plugins.dynamicresources.cel import Cache
from wasmsched.plugins.dynamicresources.consumable_capacity import (
    AllocatedState,
    ConsumedCapacityCollection,
    SharedDeviceID,
)

# --- Go values -------------------------------------------------------------------------------------

BinarySI = BINARY_SI
DecimalSI = DECIMAL_SI
Stable = "stable"
Incubating = "incubating"
Experimental = "experimental"
DeviceAllocationModeAll = "All"
DeviceAllocationModeExactCount = "ExactCount"
AllocationConfigSourceClass = "FromClass"
AllocationConfigSourceClaim = "FromClaim"
NodeSelectorOpIn = "In"
SkipNodeOperationAll = "*"
AllocationResultsMaxSize = 32
MaxInt = (1 << 63) - 1
DeviceTaintEffectNoSchedule = "NoSchedule"
DeviceTaintEffectNoExecute = "NoExecute"
DeviceTaintEffectNone = "None"
int64 = int


def MustParse(s: str) -> Quantity:
    return parse_quantity(s)


def NewQuantity(value: int, fmt: str) -> Quantity:
    return Quantity(Fraction(value), fmt)


def NewMilliQuantity(value: int, fmt: str) -> Quantity:
    return Quantity(Fraction(value, 1000), fmt)


def Sprintf(fmt: str, *args: Any) -> str:
    return fmt.replace("%v", "%s") % args


def setsNew(*items: Any) -> set[Any]:
    return set(items)


def MakeDeviceID(driver: str, pool: str, device: str) -> alloc.DeviceID:
    return alloc.DeviceID(driver, pool, device)


def MakeSharedDeviceID(device_id: alloc.DeviceID, share_id: str | None) -> SharedDeviceID:
    return SharedDeviceID(device_id.driver, device_id.pool, device_id.device, share_id or "")


def ContainSubstring(s: str) -> tuple[str, ...]:
    return (s,)


def And(*matchers: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(itertools.chain.from_iterable(matchers))


def MatchError(substrings: tuple[str, ...]) -> tuple[str, ...]:
    return substrings


def Concat(*lists: list[Any]) -> list[Any]:
    return list(itertools.chain.from_iterable(lists))


def FullyQualifiedName(name: str) -> str:
    return name


region1 = "region-1"
region2 = "region-2"
node1 = "node-1"
node2 = "node-2"
classA = "class-a"
classB = "class-b"
driverA = "driver-a"
driverB = "driver-b"
pool1 = "pool-1"
pool2 = "pool-2"
pool3 = "pool-3"
pool4 = "pool-4"
req0 = "req-0"
req1 = "req-1"
req2 = "req-2"
req3 = "req-3"
subReq0 = "subReq-0"
subReq1 = "subReq-1"
req0SubReq0 = "req-0/subReq-0"
req0SubReq1 = "req-0/subReq-1"
req1SubReq0 = "req-1/subReq-0"
req1SubReq1 = "req-1/subReq-1"
req2SubReq0 = "req-2/subReq-0"
req2SubReq1 = "req-2/subReq-1"
claim0 = "claim-0"
claim1 = "claim-1"
slice1 = "slice-1"
slice2 = "slice-2"
slice3 = "slice-3"
slice4 = "slice-4"
device0 = "device-0"
device1 = "device-1"
device2 = "device-2"
device3 = "device-3"
device4 = "device-4"
counterSet1 = "counter-set-1"
counterSet2 = "counter-set-2"
capacity0 = "capacity-0"
capacity1 = "capacity-1"

fixedShareID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
zero = NewQuantity(0, BinarySI)
one = NewQuantity(1, BinarySI)
two = NewQuantity(2, BinarySI)
three = NewQuantity(3, BinarySI)
four = NewQuantity(4, BinarySI)
pointOne = MustParse("100m")
pointTwo = MustParse("200m")
pointTwoFive = MustParse("250m")
pointThree = NewMilliQuantity(300, DecimalSI)

fieldNameKey = "metadata.name"
regionKey = "region"
planetKey = "planet"
planetValueEarth = "earth"
fromCounters = "fromCounters"
nodeSelectionAll = "nodeSelectionAll"
nodeSelectionPerDevice = "nodeSelectionPerDevice"

# TestAllocator's locals.
nonExistentAttribute = driverA + "/NonExistentAttribute"
boolAttribute = driverA + "/boolAttribute"
stringAttribute = driverA + "/stringAttribute"
versionAttribute = driverA + "/driverVersion"
intAttribute = driverA + "/numa"
numaNodeAttribute = "resource.kubernetes.io/numaNode"


def _toleration(operator: str, key: str, effect: str, value: str = "") -> Any:
    t = resource_pb.DeviceToleration()
    t.operator, t.key, t.effect, t.value = operator, key, effect, value
    return t


tolerationNoScheduleKey1 = _toleration("Exists", "key1", DeviceTaintEffectNoSchedule)
taintKey = "taint-key"
taintValue = "taint-value"
taintValue2 = "taint-value-2"
tolerationNoSchedule = _toleration("Exists", taintKey, DeviceTaintEffectNoSchedule)
tolerationNoExecute = _toleration("Equal", taintKey, DeviceTaintEffectNoExecute, taintValue2)


def _qstr(q: Quantity | str) -> str:
    return q if isinstance(q, str) else str(q)


# --- API struct literals ---------------------------------------------------------------------------


def DeviceAttribute(
    StringValue: str | None = None,
    IntValue: int | None = None,
    BoolValue: bool | None = None,
    VersionValue: str | None = None,
    StringValues: list[str] | None = None,
    IntValues: list[int] | None = None,
    BoolValues: list[bool] | None = None,
    VersionValues: list[str] | None = None,
) -> Any:
    a = resource_pb.DeviceAttribute()
    if StringValue is not None:
        a.string = StringValue
    if IntValue is not None:
        a.int = IntValue
    if BoolValue is not None:
        a.bool = BoolValue
    if VersionValue is not None:
        a.version = VersionValue
    a.strings.extend(StringValues or [])
    a.ints.extend(IntValues or [])
    a.bools.extend(BoolValues or [])
    a.versions.extend(VersionValues or [])
    return a


def CELDeviceSelector(Expression: str) -> str:
    return Expression


def DeviceSelector(CEL: str | None = None) -> Any:
    s = resource_pb.DeviceSelector()
    if CEL is not None:
        s.cel.expression = CEL
    return s


def DeviceAllocationMode(mode: str) -> str:
    return mode


def DeviceConstraint(
    MatchAttribute: str | None = None, DistinctAttribute: str | None = None, Requests: list[str] | None = None
) -> Any:
    c = resource_pb.DeviceConstraint()
    if MatchAttribute is not None:
        c.matchAttribute = MatchAttribute
    if DistinctAttribute is not None:
        c.distinctAttribute = DistinctAttribute
    c.requests.extend(Requests or [])
    return c


def DeviceTaint(Key: str = "", Value: str = "", Effect: str = "") -> Any:
    t = resource_pb.DeviceTaint()
    t.key, t.value, t.effect = Key, Value, Effect
    return t


taintNone = DeviceTaint(taintKey, taintValue, DeviceTaintEffectNone)
taintNoSchedule = DeviceTaint(taintKey, taintValue, DeviceTaintEffectNoSchedule)
taintNoExecute = DeviceTaint(taintKey, taintValue2, DeviceTaintEffectNoExecute)


def _proto(msg: Any, **go_fields: Any) -> Any:
    """A Go struct literal as a proto message: the proto's field is the Go name, lower camel case."""
    for go_name, value in go_fields.items():
        if value is None:
            continue
        _assign(msg, "metadata" if go_name == "ObjectMeta" else _proto_name(go_name), value)
    return msg


def _assign(msg: Any, name: str, value: Any) -> None:
    """msg.name = value, for a proto field of any kind: a repeated one takes the list's items (replacing its
    own), a message field a copy of the message."""
    if isinstance(value, list):
        target = getattr(msg, name)
        del target[:]
        for v in value:
            if hasattr(v, "DESCRIPTOR"):
                target.add().CopyFrom(v)
            else:
                target.append(v)
    elif hasattr(value, "DESCRIPTOR"):
        getattr(msg, name).CopyFrom(value)
    else:
        setattr(msg, name, value)


def ObjectMeta(**kw: Any) -> Any:
    return _proto(type(api.DeviceClass().metadata)(), **kw)


def DeviceClassSpec(**kw: Any) -> Any:
    return _proto(resource_pb.DeviceClassSpec(), **kw)


def DeviceClass(**kw: Any) -> api.DeviceClass:
    return _proto(api.DeviceClass(), **kw)  # type: ignore[no-any-return]


def ExactDeviceRequest(**kw: Any) -> Any:
    return _proto(resource_pb.ExactDeviceRequest(), **kw)


def DeviceRequest(**kw: Any) -> Any:
    return _proto(resource_pb.DeviceRequest(), **kw)


def DeviceDerivedAttribute(**kw: Any) -> Any:
    return _proto(resource_pb.DeviceDerivedAttribute(), **kw)


def NodeSelectorRequirement(**kw: Any) -> Any:
    return _proto(core_pb.NodeSelectorRequirement(), **kw)


def NodeSelectorTerm(**kw: Any) -> Any:
    return _proto(core_pb.NodeSelectorTerm(), **kw)


def NodeSelector(**kw: Any) -> Any:
    return _proto(core_pb.NodeSelector(), **kw)


def DeviceAllocationConfiguration(**kw: Any) -> Any:
    return _proto(resource_pb.DeviceAllocationConfiguration(), **kw)


def DeviceClaimConfiguration(**kw: Any) -> Any:
    return _proto(resource_pb.DeviceClaimConfiguration(), **kw)


# --- the statements of the Go test table's closures (func() T { ...; return x }()) -----------------

_PATH_STEP = re.compile(r"(\w+)(?:\[(\d+)\])?")


def _proto_of(obj: Any) -> Any:
    return obj.obj() if hasattr(obj, "obj") else obj


def _field_parent(obj: Any, path: str) -> tuple[Any, str]:
    """The proto message holding the last field of a Go field path (x.Spec.Pool.Generation), and that
    field's proto name. ObjectMeta is embedded in Go: x.Name is metadata.name."""
    steps = path.split(".")
    msg = _proto_of(obj)
    if len(steps) == 1 and steps[0] == "Name":
        return msg.metadata, "name"
    for step in steps[:-1]:
        m = _PATH_STEP.fullmatch(step)
        assert m is not None, step
        msg = getattr(msg, _proto_name(m.group(1)))
        if m.group(2) is not None:
            msg = msg[int(m.group(2))]
    return msg, _proto_name(steps[-1])


def _proto_name(go_name: str) -> str:
    return "cel" if go_name == "CEL" else go_name[0].lower() + go_name[1:]


def setField(obj: Any, path: str, value: Any) -> Any:
    msg, name = _field_parent(obj, path)
    _assign(msg, name, value)
    return obj


def addField(obj: Any, path: str, value: Any) -> Any:
    msg, name = _field_parent(obj, path)
    setattr(msg, name, getattr(msg, name) + value)
    return obj


def incField(obj: Any, path: str) -> Any:
    return addField(obj, path, 1)


def deepCopy(obj: Any) -> Any:
    out = type(obj)()
    out.CopyFrom(obj)
    return out


def deviceConfiguration(driver: str, attribute: str) -> Any:
    c = resource_pb.DeviceConfiguration()
    c.opaque.driver = driver
    c.opaque.parameters.raw = f'{{"{attribute}":"{attribute}Value"}}'.encode()
    return c


def CapacityRequestPolicyRange(
    Min: Quantity | None = None, Max: Quantity | None = None, Step: Quantity | None = None
) -> Any:
    r = resource_pb.CapacityRequestPolicyRange()
    for name, q in (("min", Min), ("max", Max), ("step", Step)):
        if q is not None:
            getattr(r, name).string = _qstr(q)
    return r


def CapacityRequestPolicy(
    Default: Quantity | None = None, ValidValues: list[Quantity] | None = None, ValidRange: Any = None
) -> Any:
    p = resource_pb.CapacityRequestPolicy()
    if Default is not None:
        p.default.string = _qstr(Default)
    for v in ValidValues or []:
        p.validValues.add().string = _qstr(v)
    if ValidRange is not None:
        p.validRange.CopyFrom(ValidRange)
    return p


def DeviceCapacity(Value: Quantity, RequestPolicy: Any = None) -> Any:
    c = resource_pb.DeviceCapacity()
    c.value.string = _qstr(Value)
    if RequestPolicy is not None:
        c.requestPolicy.CopyFrom(RequestPolicy)
    return c


@dataclass
class Expected:
    """An expected AllocationResult: `ordered` for a struct literal (gomega.Equal), else the
    allocationResult matcher (results in any order, no config)."""

    results: list[Any]
    node_selector: Any
    ordered: bool
    config: list[Any] = field(default_factory=list)


def DeviceAllocationResult(Results: list[Any] | None = None, Config: list[Any] | None = None) -> Any:
    return (Results or [], Config or [])


def AllocationResult(Devices: Any = None, NodeSelector: Any = None) -> Expected:
    results, config = Devices if Devices is not None else ([], [])
    return Expected(list(results), NodeSelector, True, list(config))


def allocationResult(selector: Any, *results: Any) -> Expected:
    return Expected(list(results), selector, False)


# --- Features and the test case --------------------------------------------------------------------

_FEATURE_FIELDS = {
    "AdminAccess": "admin_access",
    "PrioritizedList": "prioritized_list",
    "PartitionableDevices": "partitionable_devices",
    "DeviceTaints": "device_taints",
    "DeviceBindingAndStatus": "device_binding_and_status",
    "ConsumableCapacity": "consumable_capacity",
    "FractionalCapacityRange": "fractional_capacity_range",
    "CompatibilityGroups": "compatibility_groups",
}
# incubating.SupportedFeatures
INCUBATING_SUPPORTED = {
    "AdminAccess",
    "PrioritizedList",
    "PartitionableDevices",
    "DeviceTaints",
    "DeviceBindingAndStatus",
    "ConsumableCapacity",
    "FractionalCapacityRange",
}


@dataclass(frozen=True)
class Features:
    AdminAccess: bool = False
    CompatibilityGroups: bool = False
    ConsumableCapacity: bool = False
    DerivedAttributes: bool = False
    DeviceBindingAndStatus: bool = False
    DeviceTaints: bool = False
    FractionalCapacityRange: bool = False
    ListTypeAttributes: bool = False
    OptionalNodeOperations: bool = False
    PartitionableDevices: bool = False
    PrioritizedList: bool = False

    def enabled(self) -> set[str]:
        return {f.name for f in fields(self) if getattr(self, f.name)}

    def allocator_features(self) -> alloc.Features:
        return alloc.Features(**{py: getattr(self, go) for go, py in _FEATURE_FIELDS.items()})


@dataclass
class AllocatorTestCase:
    features: Features = field(default_factory=Features)
    claimsToAllocate: list[Any] | None = None
    allocatedDevices: list[alloc.DeviceID] = field(default_factory=list)
    allocatedSharedDeviceIDs: set[SharedDeviceID] | None = None
    allocatedCapacityDevices: dict[alloc.DeviceID, dict[str, Quantity]] | None = None
    classes: list[api.DeviceClass] | None = None
    slices: list[ResourceSlice] | None = None
    node: Node | None = None
    expectResults: list[Expected] | None = None
    expectError: tuple[str, ...] | None = None
    expectNumAllocateOneInvocations: int = 0
    expectNumAllocateOneInvocationsByChannel: dict[str, int] | None = None


# --- object generators -----------------------------------------------------------------------------


def objects(*objs: Any) -> list[Any]:
    return list(objs)


def node(name: str, region: str) -> Node:
    n = Node()
    n.metadata.name = name
    n.metadata.labels[regionKey] = region
    n.metadata.labels[planetKey] = planetValueEarth
    return n


def klass(name: str, driver: str) -> api.DeviceClass:
    c = api.DeviceClass()
    c.metadata.name = name
    c.spec.selectors.add().cel.expression = f'device.driver == "{driver}"'
    return c


def classWithConfig(name: str, driver: str, attribute: str) -> api.DeviceClass:
    c = klass(name, driver)
    c.spec.config.add().deviceConfiguration.CopyFrom(deviceConfiguration(driver, attribute))
    return c


def nodeWithDRAOptionalNodeOperations(name: str, region: str) -> Node:
    n = node(name, region)
    n.status.declaredFeatures.append("DRAOptionalNodeOperations")
    return n


def classWithAllowMultipleAllocations(name: str, driver: str, multialloc: bool) -> api.DeviceClass:
    c = api.DeviceClass()
    c.metadata.name = name
    c.spec.selectors.add().cel.expression = (
        f'device.driver == "{driver}" && device.allowMultipleAllocations == {str(multialloc).lower()}'
    )
    return c


def _exact_request(name: str, klass_name: str, count: int | None, mode: str, selectors: Sequence[Any]) -> Any:
    r = resource_pb.DeviceRequest()
    r.name = name
    r.exactly.deviceClassName = klass_name
    r.exactly.allocationMode = mode
    if count is not None:
        r.exactly.count = count
    r.exactly.selectors.extend(selectors)
    return r


def request(name: str, klass_name: str, count: int, *selectors: Any) -> Any:
    return _exact_request(name, klass_name, count, "ExactCount", selectors)


def _capacity_requests(q: Quantity | None) -> Any:
    c = resource_pb.CapacityRequirements()
    if q is not None:
        c.requests[capacity0].string = _qstr(q)
    return c


class WrapDeviceRequest:
    def __init__(self, r: Any) -> None:
        self.r = r

    def obj(self) -> Any:
        return self.r

    def withCapacityRequest(self, q: Quantity | None) -> WrapDeviceRequest:
        out = resource_pb.DeviceRequest()
        out.CopyFrom(self.r)
        out.exactly.capacity.CopyFrom(_capacity_requests(q))
        return WrapDeviceRequest(out)

    def withSelectors(self, *selectors: Any) -> WrapDeviceRequest:
        out = resource_pb.DeviceRequest()
        out.CopyFrom(self.r)
        del out.exactly.selectors[:]
        out.exactly.selectors.extend(selectors)
        return WrapDeviceRequest(out)


def deviceRequest(name: str, klass_name: str, count: int) -> WrapDeviceRequest:
    return WrapDeviceRequest(request(name, klass_name, count))


def allDeviceRequest(name: str, klass_name: str) -> WrapDeviceRequest:
    return WrapDeviceRequest(_exact_request(name, klass_name, None, "All", ()))


class WrapDeviceSubRequest:
    def __init__(self, s: Any) -> None:
        self.s = s

    def obj(self) -> Any:
        return self.s

    def _copy(self) -> Any:
        out = resource_pb.DeviceSubRequest()
        out.CopyFrom(self.s)
        return out

    def withAllocationMode(self, mode: str) -> WrapDeviceSubRequest:
        out = self._copy()
        out.allocationMode = mode
        return WrapDeviceSubRequest(out)

    def withCapacityRequest(self, q: Quantity | None) -> WrapDeviceSubRequest:
        out = self._copy()
        out.capacity.CopyFrom(_capacity_requests(q))
        return WrapDeviceSubRequest(out)


def subRequest(name: str, klass_name: str, count: int, *fields_: Any) -> WrapDeviceSubRequest:
    s = resource_pb.DeviceSubRequest()
    s.name, s.count, s.allocationMode, s.deviceClassName = name, count, "ExactCount", klass_name
    for f in fields_:
        if isinstance(f, resource_pb.DeviceSelector):
            s.selectors.append(f)
        elif isinstance(f, resource_pb.DeviceToleration):
            s.tolerations.append(f)
        elif isinstance(f, list):
            s.derivedAttributes.extend(f)
        else:
            raise TypeError(f"unsupported field for DeviceSubRequest: {type(f)}")
    return WrapDeviceSubRequest(s)


def requestWithPrioritizedList(name: str, *subs: WrapDeviceSubRequest) -> WrapDeviceRequest:
    r = resource_pb.DeviceRequest()
    r.name = name
    for s in subs:
        r.firstAvailable.append(s.obj())
    return WrapDeviceRequest(r)


class WrapResourceClaim:
    def __init__(self, c: ResourceClaim) -> None:
        self.c = c

    def obj(self) -> ResourceClaim:
        return self.c

    def _copy(self) -> ResourceClaim:
        out = ResourceClaim()
        out.CopyFrom(self.c)
        return out

    def withTolerations(self, *tolerations: Any) -> WrapResourceClaim:
        out = self._copy()
        for r in out.spec.devices.requests:
            r.exactly.tolerations.extend(tolerations)
        return WrapResourceClaim(out)

    def withRequests(self, *requests: WrapDeviceRequest) -> WrapResourceClaim:
        out = self._copy()
        del out.spec.devices.requests[:]
        for r in requests:
            out.spec.devices.requests.append(r.obj())
        return WrapResourceClaim(out)

    def withConstraints(self, *constraints: Any) -> WrapResourceClaim:
        out = self._copy()
        del out.spec.devices.constraints[:]
        out.spec.devices.constraints.extend(constraints)
        return WrapResourceClaim(out)

    def withConfigs(self, configs: list[Any]) -> WrapResourceClaim:
        out = self._copy()
        del out.spec.devices.config[:]
        out.spec.devices.config.extend(configs)
        return WrapResourceClaim(out)


def claim(name: str) -> WrapResourceClaim:
    c = ResourceClaim()
    c.metadata.name = name
    return WrapResourceClaim(c)


def claimWithRequests(name: str, constraints: list[Any] | None, *requests: Any) -> WrapResourceClaim:
    c = ResourceClaim()
    c.metadata.name = name
    c.spec.devices.requests.extend(requests)
    c.spec.devices.constraints.extend(constraints or [])
    return WrapResourceClaim(c)


def claimWithRequest(name: str, req: str, klass_name: str, *constraints: Any) -> WrapResourceClaim:
    return claimWithRequests(name, list(constraints), request(req, klass_name, 1))


def deviceClaimConfig(requests: list[str] | None, config: Any) -> Any:
    c = resource_pb.DeviceClaimConfiguration()
    c.requests.extend(requests or [])
    c.deviceConfiguration.CopyFrom(config)
    return c


def claimWithDeviceConfig(name: str, req: str, klass_name: str, driver: str, attribute: str) -> WrapResourceClaim:
    c = claimWithRequest(name, req, klass_name)
    c.c.spec.devices.config.add().deviceConfiguration.CopyFrom(deviceConfiguration(driver, attribute))
    return c


def requestWithDerivedAttributes(name: str, klass_name: str, count: int, derived: list[Any], *selectors: Any) -> Any:
    r = request(name, klass_name, count, *selectors)
    r.exactly.derivedAttributes.extend(derived)
    return r


class WrapDevice:
    def __init__(self, d: Any, capacity_from_counters: bool = False) -> None:
        self.d = d
        self.capacity_from_counters = capacity_from_counters

    def obj(self) -> Any:
        return self.d

    def _copy(self) -> Any:
        out = resource_pb.Device()
        out.CopyFrom(self.d)
        return out

    def withTaints(self, *taints: Any) -> WrapDevice:
        out = self._copy()
        out.taints.extend(taints)
        return WrapDevice(out)

    def withDeviceCounterConsumption(self, *consumption: Any) -> WrapDevice:
        out = self._copy()
        out.consumesCounters.extend(consumption)
        if self.capacity_from_counters:
            out.ClearField("capacity")
            for dcc in out.consumesCounters:
                for name, c in dcc.counters.items():
                    out.capacity[name].value.CopyFrom(c.value)
        return WrapDevice(out)

    def withNodeSelection(self, selection: Any) -> WrapDevice:
        out = self._copy()
        if isinstance(selection, core_pb.NodeSelector):
            out.nodeSelector.CopyFrom(selection)
        elif selection == nodeSelectionAll:
            out.allNodes = True
        else:
            out.nodeName = selection
        return WrapDevice(out)

    def withBindingConditions(self, conditions: list[str] | None, failure_conditions: list[str] | None) -> WrapDevice:
        out = self._copy()
        del out.bindingConditions[:]
        del out.bindingFailureConditions[:]
        out.bindingConditions.extend(conditions or [])
        out.bindingFailureConditions.extend(failure_conditions or [])
        return WrapDevice(out)

    def withBindsToNode(self, binds: bool) -> WrapDevice:
        out = self._copy()
        out.bindsToNode = binds
        return WrapDevice(out)

    def withAllowMultipleAllocations(self) -> WrapDevice:
        out = self._copy()
        out.allowMultipleAllocations = True
        return WrapDevice(out)

    def _with_policy(self, capacity: dict[str, Quantity], policy: Callable[[], Any]) -> WrapDevice:
        out = self._copy()
        for name, q in (capacity or {}).items():
            out.capacity[name].CopyFrom(DeviceCapacity(q, policy()))
        return WrapDevice(out)

    def withCapacityRequestPolicyRange(self, capacity: dict[str, Quantity]) -> WrapDevice:
        return self._with_policy(
            capacity,
            lambda: CapacityRequestPolicy(
                Default=two, ValidRange=CapacityRequestPolicyRange(Min=two, Step=two, Max=four)
            ),
        )

    def withFractionalCapacityRequestPolicyRange(self, capacity: dict[str, Quantity]) -> WrapDevice:
        return self._with_policy(
            capacity,
            lambda: CapacityRequestPolicy(
                Default=pointTwo, ValidRange=CapacityRequestPolicyRange(Min=pointTwo, Step=pointOne, Max=one)
            ),
        )

    def withCapacityRequestPolicyValidValues(
        self, default: Quantity, capacity: dict[str, Quantity], additional: list[Quantity] | None
    ) -> WrapDevice:
        return self._with_policy(
            capacity, lambda: CapacityRequestPolicy(Default=default, ValidValues=[default, *(additional or [])])
        )


def device(name: str, capacity: Any, attributes: dict[str, Any] | None) -> WrapDevice:
    d = resource_pb.Device()
    d.name = name
    for k, v in (attributes or {}).items():
        d.attributes[k].CopyFrom(v)
    from_counters = False
    if isinstance(capacity, dict):
        for k, v in capacity.items():
            if isinstance(v, resource_pb.DeviceCapacity):
                d.capacity[k].CopyFrom(v)
            else:
                d.capacity[k].value.string = _qstr(v)
    elif capacity == fromCounters:
        from_counters = True
    elif capacity is not None:
        raise TypeError(f"unexpected capacity {capacity!r}")
    return WrapDevice(d, from_counters)


def deviceCounterConsumption(counter_set: str, counters: dict[str, Quantity] | None) -> Any:
    c = resource_pb.DeviceCounterConsumption()
    c.counterSet = counter_set
    for k, v in (counters or {}).items():
        c.counters[k].value.string = _qstr(v)
    return c


def deviceCounterConsumptionWithGroups(counter_set: str, counters: dict[str, Quantity], *groups: str) -> Any:
    c = deviceCounterConsumption(counter_set, counters)
    c.compatibilityGroups.extend(groups)
    return c


def resourcePool(name: str, count: int) -> Any:
    p = resource_pb.ResourcePool()
    p.name, p.resourceSliceCount, p.generation = name, count, 1
    return p


def _slice(name: str, node_selection: Any, pool: Any, driver: str) -> ResourceSlice:
    s = ResourceSlice()
    s.metadata.name = name
    s.spec.driver = driver
    if isinstance(pool, str):
        pool = resourcePool(pool, 1)
    s.spec.pool.CopyFrom(pool)
    if isinstance(node_selection, core_pb.NodeSelector):
        s.spec.nodeSelector.CopyFrom(node_selection)
    elif node_selection == nodeSelectionAll:
        s.spec.allNodes = True
    elif node_selection == nodeSelectionPerDevice:
        s.spec.perDeviceNodeSelection = True
    else:
        s.spec.nodeName = node_selection
    return s


class WrapSlice:
    def __init__(self, s: ResourceSlice) -> None:
        self.s = s

    def obj(self) -> ResourceSlice:
        return self.s

    def withSkipNodeOperations(self, *skip: str) -> WrapSlice:
        out = ResourceSlice()
        out.CopyFrom(self.s)
        del out.spec.skipNodeOperations[:]
        out.spec.skipNodeOperations.extend(skip)
        return WrapSlice(out)


def sliceWithNoDevices(name: str, node_selection: Any, pool: Any, driver: str) -> WrapSlice:
    return sliceWithDevices(name, node_selection, pool, driver)


def sliceWithDevices(name: str, node_selection: Any, pool: Any, driver: str, *devices: WrapDevice) -> WrapSlice:
    s = _slice(name, node_selection, pool, driver)
    for d in devices:
        s.spec.devices.append(d.obj())
    return WrapSlice(s)


def sliceWithOneDevice(name: str, node_selection: Any, pool: Any, driver: str) -> WrapSlice:
    return sliceWithDevices(name, node_selection, pool, driver, device(device1, None, None))


def sliceWithMultipleDevices(name: str, node_selection: Any, pool: Any, driver: str, count: int) -> WrapSlice:
    return sliceWithDevices(
        name, node_selection, pool, driver, *(device(f"device-{i}", None, None) for i in range(count))
    )


def counterSet(name: str, counters: dict[str, Quantity] | None) -> Any:
    cs = resource_pb.CounterSet()
    cs.name = name
    for k, v in (counters or {}).items():
        cs.counters[k].value.string = _qstr(v)
    return cs


def sliceWithCounterSets(name: str, node_selection: Any, pool: Any, driver: str, *counter_sets: Any) -> WrapSlice:
    s = _slice(name, node_selection, pool, driver)
    s.spec.sharedCounters.extend(counter_sets)
    return WrapSlice(s)


def unwrapResourceSlices(*objs: WrapSlice) -> list[ResourceSlice]:
    return [o.obj() for o in objs]


def unwrap(*objs: Any) -> list[Any]:
    return [o.obj() for o in objs]


def deviceAllocationResult(req: str, driver: str, pool: str, dev: str, admin_access: bool, *tolerations: Any) -> Any:
    r = resource_pb.DeviceRequestAllocationResult()
    r.request, r.driver, r.pool, r.device = req, driver, pool, dev
    r.tolerations.extend(tolerations)
    if admin_access:
        r.adminAccess = True
    return r


def deviceAllocationResultWithSkipNodeOperations(req: str, driver: str, pool: str, dev: str, *skip: str) -> Any:
    r = deviceAllocationResult(req, driver, pool, dev, False)
    r.skipNodeOperations.extend(skip)
    return r


def multipleDeviceAllocationResults(req: str, driver: str, pool: str, count: int, start: int) -> list[Any]:
    return [deviceAllocationResult(req, driver, pool, f"device-{i}", False) for i in range(start, start + count)]


def allocationResultWithConfig(selector: Any, driver: str, source: str, attribute: str, *results: Any) -> Expected:
    c = resource_pb.DeviceAllocationConfiguration()
    c.source = source
    c.deviceConfiguration.CopyFrom(deviceConfiguration(driver, attribute))
    return Expected(list(results), selector, True, [c])


def allocationResultWithConfigs(selector: Any, results: list[Any], configs: list[Any]) -> Expected:
    return Expected(list(results), selector, True, list(configs))


class WrapDeviceRequestAllocationResult:
    def __init__(self, r: Any) -> None:
        self.r = r

    def obj(self) -> Any:
        return self.r

    def withConsumedCapacity(self, share_id: str | None, consumed: dict[str, Quantity] | None) -> Any:
        out = resource_pb.DeviceRequestAllocationResult()
        out.CopyFrom(self.r)
        if share_id is not None:
            out.shareID = share_id
        for k, v in (consumed or {}).items():
            out.consumedCapacity[k].string = _qstr(v)
        return out


def deviceRequestAllocationResult(req: str, driver: str, pool: str, dev: str) -> WrapDeviceRequestAllocationResult:
    return WrapDeviceRequestAllocationResult(deviceAllocationResult(req, driver, pool, dev, False))


def deviceRequestAllocationResultWithBindingConditions(
    req: str,
    driver: str,
    pool: str,
    dev: str,
    conditions: list[str] | None,
    failure_conditions: list[str] | None,
    *tolerations: Any,
) -> Any:
    r = deviceAllocationResult(req, driver, pool, dev, False, *tolerations)
    r.bindingConditions.extend(conditions or [])
    r.bindingFailureConditions.extend(failure_conditions or [])
    return r


def nodeLabelSelector(key: str, *values: str) -> Any:
    ns = core_pb.NodeSelector()
    req = ns.nodeSelectorTerms.add().matchExpressions.add()
    req.key, req.operator = key, "In"
    req.values.extend(values)
    return ns


def localNodeSelector(node_name: str) -> Any:
    ns = core_pb.NodeSelector()
    req = ns.nodeSelectorTerms.add().matchFields.add()
    req.key, req.operator = fieldNameKey, "In"
    req.values.append(node_name)
    return ns


# --- the runner ------------------------------------------------------------------------------------


def _norm_result(r: Any, fix_share_id: bool) -> tuple[Any, ...]:
    share = r.shareID if r.HasField("shareID") else None
    if share is not None and fix_share_id:
        share = fixedShareID
    return (
        r.request,
        r.driver,
        r.pool,
        r.device,
        r.adminAccess if r.HasField("adminAccess") else None,
        tuple(t.SerializeToString(deterministic=True) for t in r.tolerations),
        tuple(r.bindingConditions),
        tuple(r.bindingFailureConditions),
        share,
        tuple(sorted((k, parse_quantity(v.string).amount) for k, v in r.consumedCapacity.items())),
    )


def _norm_requirements(reqs: Any) -> list[tuple[Any, ...]]:
    return sorted((r.key, r.operator, tuple(sorted(r.values))) for r in reqs)


def _norm_selector(ns: Any) -> Any:
    if ns is None:
        return None
    return sorted(
        (repr(_norm_requirements(t.matchExpressions)), repr(_norm_requirements(t.matchFields)))
        for t in ns.nodeSelectorTerms
    )


def _matches(actual: Any, want: Expected) -> bool:
    got = [_norm_result(r, True) for r in actual.devices.results]
    exp = [_norm_result(r, False) for r in want.results]
    if want.ordered:
        if got != exp or [c.SerializeToString(deterministic=True) for c in actual.devices.config] != [
            c.SerializeToString(deterministic=True) for c in want.config
        ]:
            return False
    elif sorted(got, key=repr) != sorted(exp, key=repr) or len(actual.devices.config) > 0:
        return False
    if actual.HasField("allocationTimestamp"):
        return False
    got_ns = actual.nodeSelector if actual.HasField("nodeSelector") else None
    return bool(_norm_selector(got_ns) == _norm_selector(want.node_selector))


def _consist_of(results: list[Any], expected: list[Expected]) -> bool:
    if len(results) != len(expected):
        return False
    return any(
        all(_matches(r, e) for r, e in zip(results, perm, strict=True)) for perm in itertools.permutations(expected)
    )


def run_test_allocator(tc: AllocatorTestCase, supported: set[str], channel: str) -> str | None:
    """RunTestAllocator for one case: None when it passed, the reason to skip it otherwise; fails by
    assertion."""
    missing = tc.features.enabled() - supported
    if missing:
        return f"required feature(s) {sorted(missing)} not supported by allocator"
    state = AllocatedState(
        allocated_devices=set(tc.allocatedDevices),
        allocated_shared_device_ids=set(tc.allocatedSharedDeviceIDs or ()),
        aggregated_capacity=ConsumedCapacityCollection(
            {k: {n: q.amount for n, q in v.items()} for k, v in (tc.allocatedCapacityDevices or {}).items()}
        ),
    )
    classes = {c.metadata.name: c for c in tc.classes or ()}
    a = alloc.Allocator(tc.features.allocator_features(), state, classes.get, tc.slices or [], Cache())
    claims = [c.obj() for c in tc.claimsToAllocate or ()]
    try:
        results = a.allocate(tc.node or node(node1, region1), claims)
    except alloc.AllocationError as e:
        assert tc.expectError is not None, f"unexpected error: {e}"
        for substring in tc.expectError:
            assert substring in str(e), f"error {e!r} does not contain {substring!r}"
        results = None
    else:
        assert tc.expectError is None, f"expected an error containing {tc.expectError!r}"
    got = results or []
    want = tc.expectResults or []
    assert _consist_of(got, want), f"results {got} do not consist of {want}"
    if tc.expectNumAllocateOneInvocations > 0:
        expect = (tc.expectNumAllocateOneInvocationsByChannel or {}).get(channel, tc.expectNumAllocateOneInvocations)
        assert a.num_allocate_one_invocations == expect
    return None
