"""structured/internal/incubating/consumable_capacity_test.go (TestConsumableCapacity), case by case."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from wasmsched.api.gen.k8s_io.api.resource.v1 import generated_pb2 as resource_pb
from wasmsched.api.quantity import DECIMAL_SI, Quantity, parse_quantity
from wasmsched.plugins.dynamicresources.allocator import DeviceID
from wasmsched.plugins.dynamicresources.consumable_capacity import (
    ERR_CAPACITY_REQUEST_NOT_REPRESENTABLE,
    CapacityError,
    ConsumedCapacityCollection,
    calculate_consumed_capacity,
    capacity_add,
    capacity_empty,
    capacity_sub,
    cmp_request_over_capacity,
    get_consumed_capacity_from_request,
    safe_milli_value,
    use_milli,
    violates_policy,
)

CAPACITY0 = "capacity-0"
CAPACITY1 = "capacity-1"
INT64_MAX = (1 << 63) - 1

ONE = "1"
TWO = "2"
THREE = "3"
ZERO = "0"
MAX_INT64_Q = "9223372036854775807"
MAX_INT64_P1 = "9223372036854775808"
TWO_POW64_P3 = "18446744073709551619"
MAX_INT64_M1 = "9223372036854775806"
POINT_TWO_FIVE = "250m"
POINT_FOUR = "400m"
POINT_THREE = "300m"
POINT_TWO = "200m"
POINT_ONE = "100m"
TOO_BIG_FOR_MILLI = "9224372036854776E3"
# resource.NewMilliQuantity(math.MaxInt64-1, DecimalSI) / (math.MaxInt64, DecimalSI)
MILLI_MAX_M1 = Quantity(Fraction(INT64_MAX - 1, 1000), DECIMAL_SI)
MILLI_MAX = Quantity(Fraction(INT64_MAX, 1000), DECIMAL_SI)


def pq(s: str) -> Quantity:
    return parse_quantity(s)


def policy(
    default: str | None = None,
    valid_values: list[str] | None = None,
    range_: tuple[str | None, str | None, str | None] | None = None,
) -> Any:
    p = resource_pb.CapacityRequestPolicy()
    if default is not None:
        p.default.string = default
    for v in valid_values or []:
        p.validValues.add().string = v
    if range_ is not None:
        p.validRange.SetInParent()
        for field_name, bound in zip(("min", "max", "step"), range_, strict=True):
            if bound is not None:
                getattr(p.validRange, field_name).string = bound
    return p


def device_capacity(value: str | Quantity, request_policy: Any = None) -> Any:
    c = resource_pb.DeviceCapacity()
    c.value.string = value if isinstance(value, str) else str(value)
    if request_policy is not None:
        c.requestPolicy.CopyFrom(request_policy)
    return c


def requirements(requests: dict[str, str]) -> Any:
    r = resource_pb.CapacityRequirements()
    for k, v in requests.items():
        r.requests[k].string = v
    return r


def test_add_sub_allocating_consumed_capacity() -> None:
    allocated: dict[str, Fraction] = {}
    assert capacity_empty(allocated), "allocated capacity should start from zero"
    one_allocated = {CAPACITY0: Fraction(1)}
    capacity_add(allocated, one_allocated)
    assert not capacity_empty(allocated), "capacity is added"
    capacity_sub(allocated, one_allocated)
    assert capacity_empty(allocated), "capacity is subtracted to zero"


def test_insert_remove_allocating_consumed_capacity_collection() -> None:
    device_id = DeviceID("driver-a", "pool-1", "device-1")
    aggregated = ConsumedCapacityCollection()
    aggregated.insert(device_id, {CAPACITY0: Fraction(1)})
    aggregated.insert(device_id, {CAPACITY0: Fraction(1)})
    allocated = aggregated.get(device_id)
    assert allocated is not None, "expected deviceID to be found"
    assert allocated[CAPACITY0] == 2
    aggregated.remove(device_id, {CAPACITY0: Fraction(1)})
    assert allocated[CAPACITY0] == 1


def test_get_consumed_capacity_from_request() -> None:
    requested = requirements({CAPACITY0: ONE, "dummy": ONE})
    consumable = {
        # with request and with default, expect requested value
        CAPACITY0: device_capacity(TWO, policy(default=TWO, range_=(ONE, None, None))),
        # no request but with default, expect default
        CAPACITY1: device_capacity(TWO, policy(default=ONE, range_=(ONE, None, None))),
        # no request and no policy (no default), expect capacity value
        "dummy": device_capacity(ONE),
    }
    consumed = get_consumed_capacity_from_request(requested, consumable, False)
    assert len(consumed) == 3
    for name, val in consumed.items():
        assert name in (CAPACITY0, CAPACITY1, "dummy")
        assert val.amount == 1


@pytest.mark.parametrize(
    ("name", "requested", "request_policy", "fractional", "expect"),
    [
        ("no constraint", ONE, None, False, False),
        ("less than maximum", ONE, policy(default=ONE, range_=(ONE, TWO, None)), False, False),
        ("more than maximum", TWO, policy(default=ONE, range_=(ONE, ONE, None)), False, True),
        ("in set", ONE, policy(default=ONE, valid_values=[ONE]), False, False),
        ("not in set", TWO, policy(default=ONE, valid_values=[ONE]), False, True),
        (
            "fractional step aligned (0.3 = min+1*step)",
            POINT_THREE,
            policy(default=POINT_TWO, range_=(POINT_TWO, ONE, POINT_ONE)),
            True,
            False,
        ),
        (
            "fractional step not aligned (0.25 is not a multiple of 0.1 from 0.2)",
            POINT_TWO_FIVE,
            policy(default=POINT_TWO, range_=(POINT_TWO, ONE, POINT_ONE)),
            True,
            True,
        ),
        (
            "requested value overflows milli representation",
            TOO_BIG_FOR_MILLI,
            policy(default=ONE, range_=(ONE, None, ONE)),
            True,
            True,
        ),
    ],
)
def test_violate_capacity_sharing(
    name: str, requested: str, request_policy: Any, fractional: bool, expect: bool
) -> None:
    assert violates_policy(pq(requested), request_policy, fractional) is expect


@pytest.mark.parametrize(
    ("name", "requested", "capacity_value", "request_policy", "fractional", "expect"),
    [
        ("empty", None, ONE, policy(), False, ONE),
        (
            "request-above-maxint64-is-rejected",
            TWO_POW64_P3,
            TWO_POW64_P3,
            policy(default=ZERO, range_=(ZERO, None, THREE)),
            False,
            None,
        ),
        (
            "rounded-value-above-maxint64-is-rejected",
            MAX_INT64_Q,
            MAX_INT64_P1,
            policy(default=ZERO, range_=(ZERO, None, TWO)),
            False,
            None,
        ),
        (
            "max-safe-boundary-rounds-to-maxint64",
            MAX_INT64_M1,
            MAX_INT64_Q,
            policy(default=ONE, range_=(ONE, None, TWO)),
            False,
            MAX_INT64_Q,
        ),
        ("min in range", None, TWO, policy(default=ONE, range_=(ONE, None, None)), False, ONE),
        ("default in set", None, TWO, policy(default=ONE, valid_values=[ONE]), False, ONE),
        ("more than min in range", TWO, TWO, policy(default=ONE, range_=(ONE, None, None)), False, TWO),
        ("less than min in range", ONE, TWO, policy(default=ONE, range_=(TWO, None, None)), False, TWO),
        ("with step (round up)", TWO, THREE, policy(default=ONE, range_=(ONE, None, TWO)), False, THREE),
        ("with step (no remaining)", TWO, TWO, policy(default=ONE, range_=(ONE, None, ONE)), False, TWO),
        (
            "fractional step round up (0.25 to 0.3)",
            POINT_TWO_FIVE,
            ONE,
            policy(default=POINT_TWO, range_=(POINT_TWO, ONE, POINT_ONE)),
            True,
            "300m",
        ),
        (
            "fractional step already aligned (0.4 = min+2*step)",
            POINT_FOUR,
            ONE,
            policy(default=POINT_TWO, range_=(POINT_TWO, ONE, POINT_ONE)),
            True,
            "400m",
        ),
        ("valid value in set", TWO, THREE, policy(default=ONE, valid_values=[ONE, TWO, THREE]), False, TWO),
        ("set (round up)", TWO, THREE, policy(default=ONE, valid_values=[ONE, THREE]), False, THREE),
        ("larger than set", THREE, THREE, policy(default=ONE, valid_values=[ONE, TWO]), False, THREE),
        (
            "fractional-step-request-not-milli-representable-is-rejected",
            TOO_BIG_FOR_MILLI,
            TOO_BIG_FOR_MILLI,
            policy(default=ONE, range_=(POINT_ONE, None, POINT_ONE)),
            True,
            None,
        ),
        (
            "fractional-step-rounded-value-passes-milli-range-is-rejected",
            MILLI_MAX_M1,
            MILLI_MAX,
            policy(default=POINT_ONE, range_=(POINT_ONE, None, POINT_ONE)),
            True,
            None,
        ),
    ],
)
def test_calculate_consumed_capacity(
    name: str,
    requested: str | Quantity | None,
    capacity_value: str | Quantity,
    request_policy: Any,
    fractional: bool,
    expect: str | None,
) -> None:
    capacity = device_capacity(capacity_value, request_policy)
    req = pq(requested) if isinstance(requested, str) else requested
    if expect is None:
        with pytest.raises(CapacityError) as e:
            calculate_consumed_capacity(req, capacity, fractional)
        assert e.value.sentinel == ERR_CAPACITY_REQUEST_NOT_REPRESENTABLE
        return
    assert calculate_consumed_capacity(req, capacity, fractional).amount == pq(expect).amount


@pytest.mark.parametrize(
    ("name", "q", "expect"),
    [
        ("whole number", ONE, 1000),
        ("fractional milli", POINT_ONE, 100),
        ("too large for milli (overflows int64)", TOO_BIG_FOR_MILLI, None),
    ],
)
def test_safe_milli_value(name: str, q: str, expect: int | None) -> None:
    if expect is None:
        with pytest.raises(ValueError):
            safe_milli_value(pq(q))
    else:
        assert safe_milli_value(pq(q)) == expect


@pytest.mark.parametrize(
    ("name", "valid_range", "fractional", "expect"),
    [
        ("fractional disabled", (POINT_TWO, ONE, POINT_ONE), False, False),
        ("all fractional, fits in milli", (POINT_TWO, ONE, POINT_ONE), True, True),
        ("all integer, fits in milli (no hasFractional gate any more)", (ONE, THREE, ONE), True, True),
        ("min overflows milli, falls back to integer", (TOO_BIG_FOR_MILLI, None, ONE), True, False),
        ("step too small (sub-milli)", (ONE, None, "0"), True, False),
    ],
)
def test_use_milli(
    name: str, valid_range: tuple[str | None, str | None, str | None], fractional: bool, expect: bool
) -> None:
    assert use_milli(policy(range_=valid_range).validRange, fractional) is expect


def test_cmp_request_over_capacity_fatal_beats_soft() -> None:
    capacity = {
        # no policy; the request of 2 over-fills the value of 1 (soft)
        CAPACITY0: device_capacity(ONE),
        CAPACITY1: device_capacity(MAX_INT64_P1, policy(range_=(ZERO, None, TWO))),
    }
    # capacity0 over its value (soft), capacity1 rounds MaxInt64 past MaxInt64 (fatal); both map
    # orders must abort.
    for requests in ({CAPACITY0: TWO, CAPACITY1: MAX_INT64_Q}, {CAPACITY1: MAX_INT64_Q, CAPACITY0: TWO}):
        for cap in (capacity, dict(reversed(list(capacity.items())))):
            with pytest.raises(CapacityError) as e:
                cmp_request_over_capacity({}, requirements(requests), cap, {}, False)
            assert e.value.sentinel == ERR_CAPACITY_REQUEST_NOT_REPRESENTABLE
