"""The celpy side of the device selectors' CEL environment (see cel.py): the `device` activation,
kube's Quantity and semver libraries, compilation and evaluation. Imported on the first selector
compiled, so a profile whose pods never use DRA does not pay for loading celpy.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import celpy
from celpy import celtypes
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from wasmsched.api.quantity import Quantity as _Q
from wasmsched.api.quantity import parse_quantity
from wasmsched.plugins.dynamicresources.cel import (
    ATTRIBUTES_VAR,
    CAPACITY_VAR,
    DEVICE_VAR,
    DRIVER_VAR,
    MULTI_ALLOC_VAR,
    CELRuntimeError,
    Device,
    parse_qualified_name,
)


class CELQuantity:
    """apiserver/pkg/cel.Quantity: an opaque value compared and combined exactly."""

    __slots__ = ("q",)

    def __init__(self, q: _Q) -> None:
        self.q = q

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CELQuantity) and self.q.amount == other.q.amount

    def __hash__(self) -> int:
        return hash(self.q.amount)

    def __repr__(self) -> str:
        return f"Quantity({self.q})"


# semver 2.0.0 as blang/semver parses it (no leading "v", no leading zeros in numeric parts).
_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


class Semver:
    """apiserver/pkg/cel.Semver: a semantic version ordered by semver precedence."""

    __slots__ = ("build", "major", "minor", "patch", "pre")

    def __init__(self, text: str) -> None:
        m = _SEMVER_RE.match(text)
        if m is None:
            raise ValueError(f"Invalid semver: {text!r}")
        self.major, self.minor, self.patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        self.pre: tuple[str, ...] = tuple(m.group(4).split(".")) if m.group(4) else ()
        self.build = m.group(5) or ""

    def compare(self, other: Semver) -> int:
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if self.pre == other.pre:
            return 0
        # A version without pre-release fields has the higher precedence.
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            xn, yn = x.isdigit(), y.isdigit()
            if xn and yn:
                return -1 if int(x) < int(y) else 1
            if xn != yn:
                return -1 if xn else 1
            return -1 if x < y else 1
        return -1 if len(self.pre) < len(other.pre) else (1 if len(self.pre) > len(other.pre) else 0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __repr__(self) -> str:
        return f"Semver({self.major}.{self.minor}.{self.patch})"


def _err(msg: str) -> CELEvalError:
    return CELEvalError(msg)


def _quantity(s: Any) -> Any:
    try:
        return CELQuantity(parse_quantity(str(s)))
    except ValueError as e:
        return _err(f"quantities must match the regular expression: {e}")


def _is_quantity(s: Any) -> celtypes.BoolType:
    try:
        parse_quantity(str(s))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _semver(s: Any, normalize: Any = None) -> Any:
    text = str(s)
    if normalize:
        text = _normalize_semver(text)
    try:
        return Semver(text)
    except ValueError as e:
        return _err(str(e))


def _normalize_semver(text: str) -> str:
    """library.semver's normalization: drop a leading "v", pad missing minor/patch with 0, strip
    leading zeros."""
    text = text.removeprefix("v")
    core, sep, rest = text.partition("-")
    if not sep:
        core, sep, rest = text.partition("+")
    parts = core.split(".")
    while len(parts) < 3:
        parts.append("0")
    parts = [p.lstrip("0") or "0" if p.isdigit() else p for p in parts]
    return ".".join(parts) + (sep + rest if sep else "")


def _is_semver(s: Any, normalize: Any = None) -> celtypes.BoolType:
    text = _normalize_semver(str(s)) if normalize else str(s)
    return celtypes.BoolType(_SEMVER_RE.match(text) is not None)


def _cmp(a: Any, b: Any) -> int | CELEvalError:
    if isinstance(a, CELQuantity) and isinstance(b, CELQuantity):
        return (a.q.amount > b.q.amount) - (a.q.amount < b.q.amount)
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.compare(b)
    return _err("no such overload")


def _is_greater_than(a: Any, b: Any) -> Any:
    c = _cmp(a, b)
    return c if isinstance(c, CELEvalError) else celtypes.BoolType(c > 0)


def _is_less_than(a: Any, b: Any) -> Any:
    c = _cmp(a, b)
    return c if isinstance(c, CELEvalError) else celtypes.BoolType(c < 0)


def _compare_to(a: Any, b: Any) -> Any:
    c = _cmp(a, b)
    return c if isinstance(c, CELEvalError) else celtypes.IntType(c)


def _as_amount(v: Any) -> Fraction | None:
    if isinstance(v, CELQuantity):
        return v.q.amount
    if isinstance(v, int) and not isinstance(v, bool):
        return Fraction(int(v))
    return None


def _arith(a: Any, b: Any, sign: int) -> Any:
    x, y = _as_amount(a), _as_amount(b)
    if not isinstance(a, CELQuantity) or y is None or x is None:
        return _err("no such overload")
    return CELQuantity(_Q(x + sign * y, a.q.format))


def _sign(a: Any) -> Any:
    if isinstance(a, CELQuantity):
        return celtypes.IntType((a.q.amount > 0) - (a.q.amount < 0))
    return _err("no such overload")


def _is_integer(a: Any) -> Any:
    if isinstance(a, CELQuantity):
        amt = a.q.amount
        return celtypes.BoolType(amt.denominator == 1 and -(2**63) <= amt <= 2**63 - 1)
    return _err("no such overload")


def _as_integer(a: Any) -> Any:
    if isinstance(a, CELQuantity):
        amt = a.q.amount
        if amt.denominator != 1 or not -(2**63) <= amt <= 2**63 - 1:
            return _err("cannot convert value to integer")
        return celtypes.IntType(int(amt))
    return _err("no such overload")


def _as_approximate_float(a: Any) -> Any:
    if isinstance(a, CELQuantity):
        return celtypes.DoubleType(float(a.q.amount))
    return _err("no such overload")


def _semver_part(idx: int) -> Callable[[Any], Any]:
    def part(a: Any) -> Any:
        if isinstance(a, Semver):
            return celtypes.IntType((a.major, a.minor, a.patch)[idx])
        return _err("no such overload")

    return part


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "isGreaterThan": _is_greater_than,
    "isLessThan": _is_less_than,
    "compareTo": _compare_to,
    "add": lambda a, b: _arith(a, b, 1),
    "sub": lambda a, b: _arith(a, b, -1),
    "sign": _sign,
    "isInteger": _is_integer,
    "asInteger": _as_integer,
    "asApproximateFloat": _as_approximate_float,
    "major": _semver_part(0),
    "minor": _semver_part(1),
    "patch": _semver_part(2),
}


class _MapWithDefault(celtypes.MapType):
    """kube's mapper: a lookup of an unknown domain yields an empty map (membership stays real)."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType()


def _attribute_semver(version: str) -> Any:
    try:
        return Semver(version)
    except ValueError as e:
        raise ValueError(f"parse semantic version: {e}") from None


def _attribute_value(attr: Any) -> Any:
    # List values come first, as kube's getAttributeValue checks them (whatever DRAListTypeAttributes says).
    if len(attr.ints) > 0:
        return celtypes.ListType([celtypes.IntType(v) for v in attr.ints])
    if len(attr.bools) > 0:
        return celtypes.ListType([celtypes.BoolType(v) for v in attr.bools])
    if len(attr.strings) > 0:
        return celtypes.ListType([celtypes.StringType(v) for v in attr.strings])
    if len(attr.versions) > 0:
        return celtypes.ListType([_attribute_semver(v) for v in attr.versions])
    if attr.HasField("int"):
        return celtypes.IntType(attr.int)
    if attr.HasField("bool"):
        return celtypes.BoolType(attr.bool)
    if attr.HasField("string"):
        return celtypes.StringType(attr.string)
    if attr.HasField("version"):
        try:
            return Semver(attr.version)
        except ValueError as e:
            raise ValueError(f"parse semantic version: {e}") from None
    raise ValueError("unsupported attribute value")


def device_activation(device: Device) -> dict[str, Any]:
    attributes: dict[str, dict[celtypes.StringType, Any]] = {}
    for name, attr in device.attributes.items():
        try:
            value = _attribute_value(attr)
        except ValueError as e:
            raise ValueError(f"attribute {name}: {e}") from None
        domain, ident = parse_qualified_name(name, device.driver)
        attributes.setdefault(domain, {})[celtypes.StringType(ident)] = value
    capacity: dict[str, dict[celtypes.StringType, Any]] = {}
    for name, cap in device.capacity.items():
        domain, ident = parse_qualified_name(name, device.driver)
        capacity.setdefault(domain, {})[celtypes.StringType(ident)] = CELQuantity(parse_quantity(cap.value.string))
    s = celtypes.StringType
    return {
        DEVICE_VAR: celtypes.MapType(
            {
                s(DRIVER_VAR): s(device.driver),
                s(MULTI_ALLOC_VAR): celtypes.BoolType(device.allow_multiple_allocations),
                s(ATTRIBUTES_VAR): _MapWithDefault({s(k): celtypes.MapType(v) for k, v in attributes.items()}),
                s(CAPACITY_VAR): _MapWithDefault({s(k): celtypes.MapType(v) for k, v in capacity.items()}),
            }
        )
    }


_NO_MEMBER = re.compile(r"no such member in mapping: '(.*)'")


def _runtime_message(e: CELEvalError) -> str:
    msg = str(e.args[0]) if e.args else str(e)
    m = _NO_MEMBER.fullmatch(msg)
    if m is not None:
        msg = f"no such key: {m.group(1)}"
    return msg


@dataclass(slots=True)
class CompilationResult:
    expression: str
    program: Any = None
    error: str | None = None  # apiservercel.Error's detail when compilation failed

    def device_matches(self, device: Device) -> bool:
        """CompilationResult.DeviceMatches: raises CELRuntimeError on evaluation errors."""
        if self.program is None:
            raise CELRuntimeError(self.error or "not compiled")
        try:
            activation = device_activation(device)
        except ValueError as e:
            raise CELRuntimeError(str(e)) from None
        try:
            result = self.program.evaluate(activation)
        except CELEvalError as e:
            raise CELRuntimeError(_runtime_message(e)) from None
        except (ArithmeticError, TypeError, ValueError, KeyError) as e:
            raise CELRuntimeError(str(e)) from None
        if isinstance(result, CELEvalError):
            raise CELRuntimeError(_runtime_message(result))
        if not isinstance(result, celtypes.BoolType | bool):
            # cel-go rejects non-bool selectors at compile time (validateOutputType); celpy is
            # untyped, so the check happens on the first evaluation.
            raise CELRuntimeError(f"must evaluate to bool, got {type(result).__name__}")
        return bool(result)


_ENV_LOCK = threading.Lock()
_ENV: list[celpy.Environment] = []


def _env() -> celpy.Environment:
    with _ENV_LOCK:
        if not _ENV:
            _ENV.append(celpy.Environment())
        return _ENV[0]


def compile_expression(expression: str) -> CompilationResult:
    env = _env()
    try:
        ast = env.compile(expression)
        program = env.program(ast, functions=FUNCTIONS)
    except CELParseError as e:
        return CompilationResult(expression, error="compilation failed: " + str(e.args[0] if e.args else e))
    except Exception as e:  # noqa: BLE001 - celpy raises assorted errors for expressions it cannot build
        return CompilationResult(expression, error="compilation failed: " + str(e))
    return CompilationResult(expression, program)
