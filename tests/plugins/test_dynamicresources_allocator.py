"""Hand-written cases after structured/internal/allocatortesting (allocator_testing.go); the whole table runs in
test_dynamicresources_allocator_incubating.py."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.types import DeviceClass, ResourceClaim, ResourceSlice
from wasmsched.plugins.dynamicresources.allocator import AllocationError, Allocator, DeviceID, Features
from wasmsched.plugins.dynamicresources.cel import Cache
from wasmsched.testing.builders import NodeWrapper

DRIVER_A = "driver-a"
CLASS_A = "class-a"
NODE1 = "node-1"


def klass(name: str = CLASS_A, selector: str = f'device.driver == "{DRIVER_A}"') -> DeviceClass:
    dc = DeviceClass()
    dc.metadata.name = name
    dc.spec.selectors.add().cel.expression = selector
    return dc


def slice_(
    name: str,
    node: str,
    pool: str,
    generation: int,
    devices: list[tuple[str, dict[str, Any]]],
    count: int = 1,
    driver: str = DRIVER_A,
) -> ResourceSlice:
    s = ResourceSlice()
    s.metadata.name = name
    s.spec.driver = driver
    if node:
        s.spec.nodeName = node
    else:
        s.spec.allNodes = True
    s.spec.pool.name, s.spec.pool.generation, s.spec.pool.resourceSliceCount = pool, generation, count
    for dname, attrs in devices:
        d = s.spec.devices.add()
        d.name = dname
        for k, v in attrs.items():
            if isinstance(v, int):
                d.attributes[k].int = v
            else:
                d.attributes[k].string = v
    return s


def claim(*requests: tuple[str, str, int], constraint_attr: str = "", name: str = "claim-0") -> ResourceClaim:
    c = ResourceClaim()
    c.metadata.name, c.metadata.namespace, c.metadata.uid = name, "default", name
    for rname, mode, count in requests:
        r = c.spec.devices.requests.add()
        r.name = rname
        r.exactly.deviceClassName = CLASS_A
        r.exactly.allocationMode = mode
        if mode == "ExactCount":
            r.exactly.count = count
    if constraint_attr:
        c.spec.devices.constraints.add().matchAttribute = constraint_attr
    return c


def run(
    claims: list[ResourceClaim],
    slices: list[ResourceSlice],
    allocated: set[DeviceID] | None = None,
    classes: list[DeviceClass] | None = None,
) -> list[list[str]] | None:
    by_name = {c.metadata.name: c for c in (classes if classes is not None else [klass()])}
    a = Allocator(Features(), allocated or set(), by_name.get, slices, Cache())
    result = a.allocate(NodeWrapper(NODE1).obj(), claims)
    if result is None:
        return None
    return [[f"{r.request}:{r.pool}/{r.device}" for r in res.devices.results] for res in result]


D1: list[tuple[str, dict[str, Any]]] = [("device-1", {}), ("device-2", {})]


@pytest.mark.parametrize(
    ("name", "claims", "slices", "allocated", "want"),
    [
        ("empty", [], [], None, []),
        (
            "simple",
            [claim(("req-0", "ExactCount", 1))],
            [slice_("s", NODE1, "pool-1", 1, D1)],
            None,
            [["req-0:pool-1/device-1"]],
        ),
        ("other-node", [claim(("req-0", "ExactCount", 1))], [slice_("s", "node-2", "pool-1", 1, D1)], None, None),
        (
            "all-nodes",
            [claim(("req-0", "ExactCount", 1))],
            [slice_("s", "", "pool-1", 1, D1)],
            None,
            [["req-0:pool-1/device-1"]],
        ),
        (
            "small-and-large",
            [claim(("req-0", "ExactCount", 2))],
            [slice_("s", NODE1, "pool-1", 1, D1)],
            None,
            [["req-0:pool-1/device-1", "req-0:pool-1/device-2"]],
        ),
        ("too-many", [claim(("req-0", "ExactCount", 3))], [slice_("s", NODE1, "pool-1", 1, D1)], None, None),
        (
            "already-allocated",
            [claim(("req-0", "ExactCount", 1))],
            [slice_("s", NODE1, "pool-1", 1, D1)],
            {DeviceID(DRIVER_A, "pool-1", "device-1")},
            [["req-0:pool-1/device-2"]],
        ),
        (
            "all-devices",
            [claim(("req-0", "All", 0))],
            [slice_("s", NODE1, "pool-1", 1, D1)],
            None,
            [["req-0:pool-1/device-1", "req-0:pool-1/device-2"]],
        ),
        (
            "all-devices-some-allocated",
            [claim(("req-0", "All", 0))],
            [slice_("s", NODE1, "pool-1", 1, D1)],
            {DeviceID(DRIVER_A, "pool-1", "device-1")},
            None,
        ),
        (
            "incomplete-pool",
            [claim(("req-0", "ExactCount", 1))],
            [slice_("s", NODE1, "pool-1", 1, D1, count=2)],
            None,
            None,
        ),
        (
            "newer-generation-wins",
            [claim(("req-0", "ExactCount", 1))],
            [slice_("s-old", NODE1, "pool-1", 1, D1), slice_("s-new", NODE1, "pool-1", 2, [("device-3", {})])],
            None,
            [["req-0:pool-1/device-3"]],
        ),
        (
            "two-claims",
            [claim(("req-0", "ExactCount", 1)), claim(("req-0", "ExactCount", 1), name="claim-1")],
            [slice_("s", NODE1, "pool-1", 1, D1)],
            None,
            [["req-0:pool-1/device-1"], ["req-0:pool-1/device-2"]],
        ),
        (
            "match-attribute",
            [claim(("req-0", "ExactCount", 2), constraint_attr=f"{DRIVER_A}/model")],
            [slice_("s", NODE1, "pool-1", 1, [("d1", {"model": "x"}), ("d2", {"model": "y"}), ("d3", {"model": "x"})])],
            None,
            [["req-0:pool-1/d1", "req-0:pool-1/d3"]],
        ),
        (
            "match-attribute-missing",
            [claim(("req-0", "ExactCount", 2), constraint_attr=f"{DRIVER_A}/model")],
            [slice_("s", NODE1, "pool-1", 1, [("d1", {"model": "x"}), ("d2", {})])],
            None,
            None,
        ),
    ],
)
def test_allocate(
    name: str,
    claims: list[ResourceClaim],
    slices: list[ResourceSlice],
    allocated: set[DeviceID] | None,
    want: list[list[str]] | None,
) -> None:
    assert run(claims, slices, allocated) == want


def test_first_available_falls_back() -> None:
    c = ResourceClaim()
    c.metadata.name, c.metadata.namespace = "claim-0", "default"
    r = c.spec.devices.requests.add()
    r.name = "req-0"
    for sub, count in (("big", 3), ("small", 1)):
        s = r.firstAvailable.add()
        s.name, s.deviceClassName, s.allocationMode, s.count = sub, CLASS_A, "ExactCount", count
    assert run([c], [slice_("s", NODE1, "pool-1", 1, D1)]) == [["req-0/small:pool-1/device-1"]]


def test_missing_class_is_error() -> None:
    with pytest.raises(AllocationError, match="could not retrieve device class class-a"):
        run([claim(("req-0", "ExactCount", 1))], [slice_("s", NODE1, "pool-1", 1, D1)], classes=[])


def test_node_selector_in_result() -> None:
    a = Allocator(Features(), set(), {CLASS_A: klass()}.get, [slice_("s", NODE1, "pool-1", 1, D1)], Cache())
    res = a.allocate(NodeWrapper(NODE1).obj(), [claim(("req-0", "ExactCount", 1))])
    assert res is not None
    f = res[0].nodeSelector.nodeSelectorTerms[0].matchFields[0]
    assert (f.key, f.operator, list(f.values)) == ("metadata.name", "In", [NODE1])
    b = Allocator(Features(), set(), {CLASS_A: klass()}.get, [slice_("s", "", "pool-1", 1, D1)], Cache())
    res = b.allocate(NodeWrapper(NODE1).obj(), [claim(("req-0", "ExactCount", 1))])
    assert res is not None and not res[0].HasField("nodeSelector")


def test_device_taints_need_toleration() -> None:
    s = slice_("s", NODE1, "pool-1", 1, [("d1", {})])
    t = s.spec.devices[0].taints.add()
    t.key, t.effect = "k", "NoSchedule"
    assert run([claim(("req-0", "ExactCount", 1))], [s]) is None
    c = claim(("req-0", "ExactCount", 1))
    tol = c.spec.devices.requests[0].exactly.tolerations.add()
    tol.key, tol.operator = "k", "Exists"
    assert run([c], [s]) == [["req-0:pool-1/d1"]]
