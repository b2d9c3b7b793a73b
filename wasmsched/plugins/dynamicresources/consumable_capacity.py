"""Consumable device capacity (DRAConsumableCapacity): dynamic-resource-allocation/structured/internal/
incubating/consumable_capacity.go, the ConsumedCapacity types of structured/schedulerapi/types.go and
structured/internal/allocatedstate.go.

Quantities are wasmsched.api.quantity.Quantity values (exact amount, Format, and the kept string as
Go's resource.Quantity keeps it), so results carry the same strings kube writes. Aggregated
consumption only needs amounts, so ConsumedCapacity maps a capacity name to a Fraction.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from wasmsched.api.quantity import Quantity, cached_quantity

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)

ERR_CAPACITY_REQUEST_NOT_REPRESENTABLE = "capacity request cannot be represented in the device's range arithmetic"
ERR_NEGATIVE_CAPACITY = "capacity value is negative"


class CapacityError(Exception):
    """A capacity request that aborts the allocation (kube: a non-nil error from these helpers)."""

    def __init__(self, message: str, sentinel: str) -> None:
        super().__init__(message)
        # The sentinel kube wraps with %w (errors.Is target).
        self.sentinel = sentinel


@dataclass(frozen=True, slots=True)
class SharedDeviceID:
    driver: str
    pool: str
    device: str
    share_id: str

    def __str__(self) -> str:
        s = f"{self.driver}/{self.pool}/{self.device}"
        return f"{s}/{self.share_id}" if self.share_id else s


# capacity name -> consumed amount (schedulerapi.ConsumedCapacity)
ConsumedCapacity = dict[str, Fraction]


def capacity_add(s: ConsumedCapacity, added: Mapping[str, Fraction]) -> None:
    for name, q in added.items():
        s[name] = s.get(name, Fraction(0)) + q


def capacity_sub(s: ConsumedCapacity, subtracted: Mapping[str, Fraction]) -> None:
    for name, q in subtracted.items():
        if name in s:
            s[name] -= q


def capacity_empty(s: Mapping[str, Fraction]) -> bool:
    return all(q == 0 for q in s.values())


class ConsumedCapacityCollection(dict[Any, ConsumedCapacity]):
    """schedulerapi.ConsumedCapacityCollection: device ID -> capacity consumed on it by all shares."""

    def insert(self, device_id: Any, consumed: Mapping[str, Fraction]) -> None:
        existing = self.get(device_id)
        if existing is not None:
            capacity_add(existing, consumed)
        else:
            self[device_id] = dict(consumed)

    def remove(self, device_id: Any, consumed: Mapping[str, Fraction]) -> None:
        existing = self.get(device_id)
        if existing is None:
            return
        capacity_sub(existing, consumed)
        if capacity_empty(existing):
            del self[device_id]

    def clone(self) -> ConsumedCapacityCollection:
        return ConsumedCapacityCollection({k: dict(v) for k, v in self.items()})


@dataclass(slots=True)
class AllocatedState:
    """schedulerapi.AllocatedState: what existing (and in-flight) allocations already hold."""

    allocated_devices: set[Any] = field(default_factory=set)
    allocated_shared_device_ids: set[SharedDeviceID] = field(default_factory=set)
    aggregated_capacity: ConsumedCapacityCollection = field(default_factory=ConsumedCapacityCollection)


def has_share(device_id: Any, state: AllocatedState) -> bool:
    """Some share (a shareID) of the device is allocated."""
    key = (device_id.driver, device_id.pool, device_id.device)
    return any((shared.driver, shared.pool, shared.device) == key for shared in state.allocated_shared_device_ids)


def is_device_allocated(device_id: Any, state: AllocatedState) -> bool:
    """internal.IsDeviceAllocated: dedicated, or shared at least once, or with consumed capacity."""
    if device_id in state.allocated_devices or has_share(device_id, state):
        return True
    return device_id in state.aggregated_capacity


def generate_share_id() -> str:
    """internal.GenerateShareID: uuid.NewUUID(), a random (version 4) UUID."""
    return str(uuid.uuid4())


def amounts(consumed: Mapping[str, Quantity]) -> dict[str, Fraction]:
    return {name: q.amount for name, q in consumed.items()}


def q(msg: Any) -> Quantity:
    """The Quantity of a proto resource.Quantity (an unset one is zero, as in Go)."""
    return cached_quantity(msg.string) if msg.string else Quantity(Fraction(0))


def _milli(qty: Quantity) -> int:
    return qty.milli_value()


def safe_milli_value(qty: Quantity) -> int:
    """safeMilliValue: qty in milli units, when that conversion is lossless and fits int64."""
    milli = _milli(qty)
    if milli > INT64_MAX or milli < INT64_MIN or Fraction(milli, 1000) != qty.amount:
        raise ValueError("value must be representable in milli units")
    return milli


def _go_div(a: int, b: int) -> int:
    """Go's truncating integer division."""
    n = abs(a) // abs(b)
    return n if (a >= 0) == (b >= 0) else -n


def use_milli(valid_range: Any, fractional_capacity_range: bool) -> bool:
    """useMilli: milli arithmetic when enabled, every bound is milli-representable and step >= 1m."""
    if not fractional_capacity_range:
        return False
    for i, name in enumerate(("min", "max", "step")):
        if not valid_range.HasField(name):
            continue
        try:
            value = safe_milli_value(q(getattr(valid_range, name)))
        except ValueError:
            return False
        if i == 2 and value < 1:
            return False
    return True


def _not_representable(detail: str) -> CapacityError:
    return CapacityError(f"{ERR_CAPACITY_REQUEST_NOT_REPRESENTABLE}: {detail}", ERR_CAPACITY_REQUEST_NOT_REPRESENTABLE)


def round_up_range(requested: Quantity, valid_range: Any, fractional_capacity_range: bool) -> Quantity:
    """roundUpRange: up to min, then up to the next step from min."""
    minimum = q(valid_range.min)
    if requested.amount < minimum.amount:
        return minimum
    if not valid_range.HasField("step"):
        return requested
    step = q(valid_range.step)
    if use_milli(valid_range, fractional_capacity_range):
        try:
            requested_milli = safe_milli_value(requested)
        except ValueError:
            raise _not_representable(f"request {requested} is not a representable milli value") from None
        step_milli = _milli(step)
        min_milli = _milli(minimum)
        added = requested_milli - min_milli
        n = _go_div(added, step_milli)
        if added % step_milli != 0:
            n += 1
        if n > _go_div(INT64_MAX - min_milli, step_milli):
            raise _not_representable(f"rounding request {requested} up to the next step passes the milli-value range")
        val_milli = min_milli + step_milli * n
        # NewQuantity / NewMilliQuantity in the step's format: no kept string, canonical output.
        return Quantity(Fraction(val_milli, 1000), step.format)
    if requested.amount > INT64_MAX:
        raise _not_representable(f"request {requested} exceeds MaxInt64")
    requested_int = requested.value()
    step_int = step.value()
    min_int = minimum.value()
    added = requested_int - min_int
    n = _go_div(added, step_int)
    if added % step_int != 0:
        n += 1
    if min_int >= 0 and n > _go_div(INT64_MAX - min_int, step_int):
        raise _not_representable(f"rounding request {requested} up to the next step passes MaxInt64")
    return Quantity(Fraction(min_int + step_int * n), step.format)


def round_up_valid_values(requested: Quantity, valid_values: Any) -> Quantity:
    """roundUpValidValues: the first valid value >= the request (the list is sorted), else the request."""
    for v in valid_values:
        value = q(v)
        if requested.amount <= value.amount:
            return value
    return requested


def fill_empty_request(capacity: Any) -> Quantity:
    """fillEmptyRequest: the policy's default, else the whole capacity value."""
    if capacity.HasField("requestPolicy") and capacity.requestPolicy.HasField("default"):
        return q(capacity.requestPolicy.default)
    return q(capacity.value)


def calculate_consumed_capacity(requested: Quantity | None, capacity: Any, fractional_capacity_range: bool) -> Quantity:
    """calculateConsumedCapacity; raises CapacityError when the request is not representable."""
    if requested is None:
        return fill_empty_request(capacity)
    if not capacity.HasField("requestPolicy"):
        return requested
    policy = capacity.requestPolicy
    if policy.HasField("validRange") and policy.validRange.HasField("min"):
        return round_up_range(requested, policy.validRange, fractional_capacity_range)
    if len(policy.validValues) > 0:
        return round_up_valid_values(requested, policy.validValues)
    return requested


def _requested(request_capacity: Any, name: str) -> Quantity | None:
    if request_capacity is None or name not in request_capacity.requests:
        return None
    return q(request_capacity.requests[name])


def _violate_valid_range(requested: Quantity, valid_range: Any, fractional_capacity_range: bool) -> bool:
    if valid_range.HasField("max") and requested.amount > q(valid_range.max).amount:
        return True
    if valid_range.HasField("step"):
        if use_milli(valid_range, fractional_capacity_range):
            try:
                req = safe_milli_value(requested)
            except ValueError:
                return True
            step = _milli(q(valid_range.step))
            minimum = _milli(q(valid_range.min))
        else:
            req = requested.value()
            step = q(valid_range.step).value()
            minimum = q(valid_range.min).value()
        if (req - minimum) % step != 0:
            return True
    return False


def violates_policy(requested: Quantity, policy: Any | None, fractional_capacity_range: bool) -> bool:
    """violatesPolicy. kube compares with the default by struct equality (value, format and kept
    string), which Quantity's equality mirrors."""
    if policy is None:
        return False
    if policy.HasField("default") and requested == q(policy.default):
        return False
    if policy.HasField("validRange"):
        return _violate_valid_range(requested, policy.validRange, fractional_capacity_range)
    if len(policy.validValues) > 0:
        return all(requested.amount != q(v).amount for v in policy.validValues)
    return False


def cmp_request_over_capacity(
    current: Mapping[str, Fraction],
    request_capacity: Any | None,
    capacity: Mapping[str, Any],
    allocating: Mapping[str, Fraction] | None,
    fractional_capacity_range: bool,
) -> bool:
    """CmpRequestOverCapacity: whether the request fits what is left of the device's capacity and
    honours its request policies. False skips the device; CapacityError aborts the allocation."""
    if request_capacity is not None:
        for name in request_capacity.requests:
            if name not in capacity:
                return False
    # Representability first, for every capacity, so that skip-or-abort never depends on map order.
    consumed: dict[str, Quantity] = {}
    for name, cap in capacity.items():
        try:
            value = calculate_consumed_capacity(_requested(request_capacity, name), cap, fractional_capacity_range)
        except CapacityError as e:
            raise CapacityError(f'capacity "{name}": {e}', e.sentinel) from None
        if value.amount < 0:
            raise CapacityError(f'capacity "{name}": {ERR_NEGATIVE_CAPACITY}', ERR_NEGATIVE_CAPACITY)
        consumed[name] = value
    for name, cap in capacity.items():
        value = consumed[name]
        policy = cap.requestPolicy if cap.HasField("requestPolicy") else None
        if violates_policy(value, policy, fractional_capacity_range):
            return False
        total = current.get(name, Fraction(0)) + value.amount
        if allocating is not None and name in allocating:
            total += allocating[name]
        if total > q(cap.value).amount:
            return False
    return True


def get_consumed_capacity_from_request(
    request_capacity: Any | None, capacity: Mapping[str, Any], fractional_capacity_range: bool
) -> dict[str, Quantity]:
    """GetConsumedCapacityFromRequest: what one share consumes of each of the device's capacities."""
    out: dict[str, Quantity] = {}
    for name, cap in capacity.items():
        try:
            out[name] = calculate_consumed_capacity(_requested(request_capacity, name), cap, fractional_capacity_range)
        except CapacityError as e:
            raise CapacityError(f'capacity "{name}": {e}', e.sentinel) from None
    return out
