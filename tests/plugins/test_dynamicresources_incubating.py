"""dynamicresources_test.go's cases for what 1.37's default gates add to the plugin: binding conditions
(Filter, PostFilter, PreBind waiting for them) and consumable capacity (the allocated state gathered
from the shares of shared devices)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.plugins.test_dynamicresources import (
    CLAIM_NAME,
    DRIVER,
    NODE,
    POD_NAME,
    POD_UID,
    allocated_claim,
    claim_in,
    device_class,
    pending_claim,
    pod_with_claim_name,
    pod_with_claim_template,
    setup,
)
from wasmsched.api.types import ResourceClaim, ResourceSlice
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeToStatus
from wasmsched.framework.status import Code
from wasmsched.plugins.dynamicresources import DynamicResources
from wasmsched.plugins.dynamicresources.consumable_capacity import SharedDeviceID
from wasmsched.plugins.dynamicresources.plugin import DeviceID

BINDING_CONDITIONS = ["condition"]
BINDING_FAILURE_CONDITIONS = ["failed"]


def fabric_slice() -> ResourceSlice:
    """fabricSlice: a device that binds to the node it is allocated for, with binding conditions."""
    s = ResourceSlice()
    s.metadata.name = f"{NODE}-slice"
    s.spec.driver = DRIVER
    s.spec.pool.name = NODE
    s.spec.pool.resourceSliceCount = 1
    req = s.spec.nodeSelector.nodeSelectorTerms.add().matchFields.add()
    req.key, req.operator = "metadata.name", "In"
    req.values.append(NODE)
    d = s.spec.devices.add()
    d.name = "instance-1"
    d.bindsToNode = True
    d.bindingConditions.extend(BINDING_CONDITIONS)
    d.bindingFailureConditions.extend(BINDING_FAILURE_CONDITIONS)
    return s


def with_binding_conditions(
    claim: ResourceClaim, conditions: dict[str, str] | None, allocated_at: float | None = None
) -> ResourceClaim:
    """allocationResultWithBindingConditions, plus the device's status conditions (None: no status)."""
    r = claim.status.allocation.devices.results[0]
    r.bindingConditions.extend(BINDING_CONDITIONS)
    r.bindingFailureConditions.extend(BINDING_FAILURE_CONDITIONS)
    ts = claim.status.allocation.allocationTimestamp
    ts.seconds = int(allocated_at if allocated_at is not None else time.time())
    if conditions is not None:
        st = claim.status.devices.add()
        st.driver, st.pool, st.device = DRIVER, NODE, "instance-1"
        for ctype, status in conditions.items():
            c = st.conditions.add()
            c.type, c.status = ctype, status
    return claim


def bound_claim() -> ResourceClaim:
    return with_binding_conditions(allocated_claim(), {"condition": "True", "failed": "False"})


def failed_binding_claim() -> ResourceClaim:
    return with_binding_conditions(allocated_claim(), {"condition": "False", "failed": "True"})


def run_to_filter(pl: DynamicResources, nodes: list[Any]) -> tuple[CycleState, Any]:
    cs = CycleState()
    _, st = pl.pre_filter(cs, pod_with_claim_name(), nodes)
    assert st is None
    return cs, pl.filter(cs, pod_with_claim_name(), nodes[0])


def test_bind_claim_with_binding_conditions() -> None:
    pl, h, nodes = setup([pending_claim(), device_class(), fabric_slice()])
    pl.binding_timeout = 1.0
    pl.now = lambda: 1_700_000_123.75  # the allocationTimestamp is the plugin's clock, as tests set it
    pod = pod_with_claim_name()
    cs, st = run_to_filter(pl, nodes)
    assert st is None
    assert pl.reserve(cs, pod, NODE) is None
    pending = pl.get_pending_allocation("claim-uid")
    r = pending.devices.results[0]
    assert (list(r.bindingConditions), list(r.bindingFailureConditions)) == (
        BINDING_CONDITIONS,
        BINDING_FAILURE_CONDITIONS,
    )
    # bindsToNode: the allocation is for this node only.
    f = pending.nodeSelector.nodeSelectorTerms[0].matchFields[0]
    assert (f.key, list(f.values)) == ("metadata.name", [NODE])
    st = pl.pre_bind(cs, pod, NODE)
    # From PreBind itself: no driver sets the binding conditions.
    assert st is not None and st.code == Code.ERROR
    assert "device binding timeout" in st.reasons[0]
    claim = claim_in(h)
    assert [x.uid for x in claim.status.reservedFor] == [POD_UID]
    ts = claim.status.allocation.allocationTimestamp
    assert (ts.seconds, ts.nanos) == (1_700_000_123, 0)  # metav1.Time: whole seconds on the wire
    # The allocation stays in flight until Unreserve.
    assert pl.get_pending_allocation("claim-uid") is not None
    assert [e[2] for e in h.event_recorder().events] == ["BindingConditionsPending"]
    assert h.event_recorder().events[0][3] == f"waiting for binding conditions for device on node {NODE}"


def test_bound_claim_with_succeeded_binding_conditions() -> None:
    pl, h, nodes = setup([bound_claim(), device_class()])
    cs, st = run_to_filter(pl, nodes)
    assert st is None
    pod = pod_with_claim_name()
    assert pl.reserve(cs, pod, NODE) is None
    assert pl.pre_bind(cs, pod, NODE) is None
    assert [(x.resource, x.name, x.uid) for x in claim_in(h).status.reservedFor] == [("pods", POD_NAME, POD_UID)]


@pytest.mark.parametrize(
    "claim",
    [
        pytest.param(failed_binding_claim(), id="bound-claim-with-failed-binding"),
        pytest.param(
            with_binding_conditions(allocated_claim(), {}, time.time() - 600), id="bound-claim-with-timed-out-binding"
        ),
        pytest.param(
            with_binding_conditions(
                allocated_claim(), {"condition1": "True", "condition2": "False"}, time.time() - 600
            ),
            id="bound-claim-with-mixed-binding-conditions",
        ),
    ],
)
def test_failed_or_timed_out_binding_is_deallocated(claim: ResourceClaim) -> None:
    pl, h, nodes = setup([claim, device_class()])
    cs, st = run_to_filter(pl, nodes)
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ["resourceclaim not available on the node"]
    _, pst = pl.post_filter(cs, pod_with_claim_name(), NodeToStatus())
    assert pst is not None and pst.code == Code.UNSCHEDULABLE
    assert pst.reasons == ["deallocation of ResourceClaim completed"]
    c = claim_in(h)
    assert not c.status.HasField("allocation") and len(c.status.devices) == 0


def test_not_yet_timed_out_binding_stays_available() -> None:
    pl, _, nodes = setup([with_binding_conditions(allocated_claim(), {}, time.time() - 60), device_class()])
    assert run_to_filter(pl, nodes)[1] is None


def test_prebind_fail_with_binding_timeout() -> None:
    """The claim times out (allocationTimestamp + bindingTimeout) while PreBind polls."""
    now = [1_000_000.0]
    claim = with_binding_conditions(allocated_claim(), {}, now[0] - 600 + 10)
    pl, h, nodes = setup([claim, device_class()])
    h.client().settles_synchronously = False  # type: ignore[misc]
    pl.now = pl.monotonic = lambda: now[0]
    sleeps: list[float] = []

    def sleep(d: float) -> None:
        sleeps.append(d)
        now[0] += d

    pl.sleep = sleep
    pl.now = lambda: now[0]
    cs, st = run_to_filter(pl, nodes)
    assert st is None
    pod = pod_with_claim_name()
    assert pl.reserve(cs, pod, NODE) is None
    st = pl.pre_bind(cs, pod, NODE)
    assert st is not None and st.code == Code.ERROR
    assert st.reasons == [f"device binding timeout: claim={CLAIM_NAME}"]
    # Polled every 5s until the claim timed out after 10s (strictly after: Before(now)).
    assert sleeps == [5.0, 5.0, 5.0]


def _driver_reports_after_a_poll(condition: dict[str, str]) -> tuple[Any, Any, Any, list[float]]:
    """A plugin whose claim has binding conditions, on a client that does not settle at once; at the first
    sleep of PreBind's poll, the driver reports `condition` on the allocated device. Returns the plugin,
    its handle, the nodes and the clock."""
    now = [0.0]
    pl, h, nodes = setup([with_binding_conditions(allocated_claim(), {}), device_class()])
    h.client().settles_synchronously = False  # type: ignore[misc]
    pl.monotonic = lambda: now[0]

    def sleep(d: float) -> None:
        now[0] += d
        c = claim_in(h)
        del c.status.devices[:]
        st = c.status.devices.add()
        st.driver, st.pool, st.device = DRIVER, NODE, "instance-1"
        cond = st.conditions.add()
        for field_name, value in condition.items():
            setattr(cond, field_name, value)

    pl.sleep = sleep
    return pl, h, nodes, now


def test_prebind_waits_until_conditions_are_met() -> None:
    pl, _, nodes, now = _driver_reports_after_a_poll({"type": "condition", "status": "True"})
    cs, st = run_to_filter(pl, nodes)
    assert st is None
    pod = pod_with_claim_name()
    assert pl.reserve(cs, pod, NODE) is None
    assert pl.pre_bind(cs, pod, NODE) is None
    assert now[0] == 5.0


def test_prebind_binding_failure_condition() -> None:
    pl, _, nodes, _ = _driver_reports_after_a_poll(
        {"type": "failed", "status": "True", "reason": "NoFabric", "message": "fabric is down"})
    cs, _ = run_to_filter(pl, nodes)
    pod = pod_with_claim_name()
    assert pl.reserve(cs, pod, NODE) is None
    st = pl.pre_bind(cs, pod, NODE)
    assert st is not None and st.code == Code.ERROR
    assert st.reasons == [f'device binding failed: claim={CLAIM_NAME}, reason=NoFabric, message="fabric is down"']


def test_bound_claim_without_binding_conditions() -> None:
    claim = allocated_claim()
    pl, h, nodes = setup([claim, device_class()])
    pod = pod_with_claim_template(True)
    cs = CycleState()
    assert pl.pre_filter(cs, pod, nodes)[1] is None
    assert pl.filter(cs, pod, nodes[0]) is None
    assert pl.pre_bind(cs, pod, NODE) is None
    assert claim_in(h).status.allocation.HasField("allocationTimestamp")
    assert h.event_recorder().events == []


# --- consumable capacity ------------------------------------------------------------------------


def shared_slice(capacity: str = "2") -> ResourceSlice:
    s = ResourceSlice()
    s.metadata.name = f"{NODE}-slice"
    s.spec.driver = DRIVER
    s.spec.nodeName = NODE
    s.spec.pool.name = NODE
    s.spec.pool.resourceSliceCount = 1
    d = s.spec.devices.add()
    d.name = "instance-1"
    d.allowMultipleAllocations = True
    d.capacity["memory"].value.string = capacity
    return s


def claim_requesting(memory: str, name: str = CLAIM_NAME, uid: str = "claim-uid") -> ResourceClaim:
    c = pending_claim()
    c.metadata.name, c.metadata.uid = name, uid
    c.spec.devices.requests[0].exactly.capacity.requests["memory"].string = memory
    return c


def share_of(claim: ResourceClaim, share_id: str, memory: str) -> ResourceClaim:
    """An allocated share of the shared device."""
    claim.metadata.ClearField("ownerReferences")
    r = claim.status.allocation.devices.results.add()
    r.request, r.driver, r.pool, r.device = "req-1", DRIVER, NODE, "instance-1"
    r.shareID = share_id
    r.consumedCapacity["memory"].string = memory
    return claim


def test_gather_allocated_state() -> None:
    other = share_of(claim_requesting("1", "other", "other-uid"), "share-1", "1")
    pl, _, _ = setup([other])
    state = pl.gather_allocated_state()
    assert state.allocated_devices == set()
    assert state.allocated_shared_device_ids == {SharedDeviceID(DRIVER, NODE, "instance-1", "share-1")}
    assert state.aggregated_capacity == {DeviceID(DRIVER, NODE, "instance-1"): {"memory": 1}}
    # With DRAConsumableCapacity off a share takes the whole device, as kube's fallback does.
    assert pl.list_all_allocated_devices() == {DeviceID(DRIVER, NODE, "instance-1")}


@pytest.mark.parametrize(("existing", "fits"), [("1", True), ("2", False)])
def test_shared_device_allocated_while_capacity_remains(existing: str, fits: bool) -> None:
    other = share_of(claim_requesting(existing, "other", "other-uid"), "share-1", existing)
    pl, _, nodes = setup([claim_requesting("1"), other, device_class(), shared_slice()])
    cs, st = run_to_filter(pl, nodes)
    if not fits:
        assert st is not None and st.reasons == ["cannot allocate all claims"]
        return
    assert st is None
    assert pl.reserve(cs, pod_with_claim_name(), NODE) is None
    r = pl.get_pending_allocation("claim-uid").devices.results[0]
    assert r.device == "instance-1" and r.consumedCapacity["memory"].string == "1"
    assert r.shareID not in ("", "share-1") and len(r.shareID) == 36
    # The in-flight share counts for the next pod: the device is now full.
    state = pl.gather_allocated_state()
    assert state.aggregated_capacity[DeviceID(DRIVER, NODE, "instance-1")] == {"memory": 2}


SHARED_DEVICE = "shared-instance"
CAPACITY_NAME = "my-cap"


def claim_with_share(share_id: str, consumed: str | None, name: str, uid: str) -> ResourceClaim:
    """allocatedClaimWithSharedDevice / allocatedClaimWithConsumedCapacity(2)."""
    c = pending_claim()
    c.metadata.name, c.metadata.uid = name, uid
    r = c.status.allocation.devices.results.add()
    r.request, r.driver, r.pool, r.device, r.shareID = "req-1", DRIVER, NODE, SHARED_DEVICE, share_id
    if consumed is not None:
        r.consumedCapacity[CAPACITY_NAME].string = consumed
    return c


def _allocated() -> ResourceClaim:
    return allocated_claim()


def _shared() -> ResourceClaim:
    return claim_with_share("share-123", None, "shared", "shared-uid")


def _with_capacity() -> ResourceClaim:
    return claim_with_share("share-123", "1", "with-capacity", "with-capacity-uid")


def _with_capacity2() -> ResourceClaim:
    return claim_with_share("share-456", "1", "with-capacity-2", "claim-2-uid")


@pytest.mark.parametrize(
    ("name", "allocated", "in_flight", "enabled", "ids", "shared_ids", "consumed"),
    [
        ("no-claims", [], [], False, 0, 0, None),
        ("single-allocated-claim", [_allocated], [], False, 1, 0, None),
        ("single-allocated-claim-with-shared-device", [_shared], [], True, 0, 1, None),
        ("single-allocated-claim-with-capacity", [_with_capacity], [], True, 0, 1, 1),
        ("disabled-single-allocated-claim-with-capacity", [_with_capacity], [], False, 1, 0, None),
        ("mixed-allocated-claim", [_allocated, _with_capacity], [], True, 1, 1, 1),
        ("add-inflight-allocated-claim-with-capacity", [_allocated, _with_capacity], [_with_capacity2], True, 1, 2, 2),
        (
            "disabled-inflight-allocated-claim-with-capacity",
            [_allocated, _with_capacity],
            [_with_capacity2],
            False,
            2,
            0,
            None,
        ),
    ],
)
def test_gather_allocated_state_table(
    name: str,
    allocated: list[Any],
    in_flight: list[Any],
    enabled: bool,
    ids: int,
    shared_ids: int,
    consumed: int | None,
) -> None:
    """testGatherAllocatedState."""
    from wasmsched.plugins.dynamicresources.allocator import Features

    objects: list[Any] = [make() for make in allocated]
    pending = [make() for make in in_flight]
    for p in pending:
        # Not yet written: the API server still has the claim without its allocation.
        unallocated = ResourceClaim()
        unallocated.CopyFrom(p)
        unallocated.status.ClearField("allocation")
        objects.append(unallocated)
    pl, _, _ = setup(objects)
    pl.features = Features(consumable_capacity=enabled)
    for p in pending:
        pl._signal_pending_allocation(p.metadata.uid, p)
    state = pl.gather_allocated_state()
    got_ids, got_shared, aggregated = (
        state.allocated_devices,
        state.allocated_shared_device_ids,
        state.aggregated_capacity,
    )
    assert (len(got_ids), len(got_shared)) == (ids, shared_ids)
    if consumed is not None:
        assert aggregated[DeviceID(DRIVER, NODE, SHARED_DEVICE)][CAPACITY_NAME] == consumed
    else:
        assert aggregated == {}
