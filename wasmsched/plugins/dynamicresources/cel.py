"""The CEL environment of device selectors (dynamic-resource-allocation/cel/compile.go, cache.go,
errors.go), evaluated with cel-python (`celpy`, in
celprogram.py, imported when the first selector is compiled).

A selector sees one variable, `device`, as kube's compiler declares it with the 1.37 default features
(DRAConsumableCapacity on, DRAListTypeAttributes off):
  device.driver                    string
  device.allowMultipleAllocations  bool
  device.attributes[domain][id]    int, bool, string or semver (the version attributes)
  device.capacity[domain][id]      Quantity
Qualified names without a domain get the driver's name as their domain, and looking up an unknown
domain yields an empty map (kube's mapper with a default), so `device.attributes["x"].y` fails with
"no such key" rather than on the domain.

Of kube's CEL libraries, the Quantity (`quantity()`, `isQuantity()`, comparisons, arithmetic) and
semver (`semver()`, `isSemver()`, comparisons, major/minor/patch) functions are provided; celpy
itself brings the standard functions (size, contains, startsWith, endsWith, matches, has, macros).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wasmsched.plugins.dynamicresources.celprogram import CompilationResult

# ResourceSlice device selectors: the variable's fields.
DEVICE_VAR = "device"
DRIVER_VAR = "driver"
MULTI_ALLOC_VAR = "allowMultipleAllocations"
ATTRIBUTES_VAR = "attributes"
CAPACITY_VAR = "capacity"


@dataclass(slots=True)
class Device:
    """cel.Device: what a selector sees of a device."""

    driver: str
    attributes: Mapping[str, Any]  # qualified name -> DeviceAttribute message
    capacity: Mapping[str, Any]  # qualified name -> DeviceCapacity message
    allow_multiple_allocations: bool = False


def parse_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    if not sep:
        return default_domain, name
    return domain, ident


class CELRuntimeError(RuntimeError):
    pass


def enhance_runtime_error(msg: str) -> str:
    """cel.EnhanceRuntimeError."""
    if "no such key:" in msg:
        return (
            msg + ". consider using CEL optional chaining (.? followed by orValue()) or guarding the"
            " check with has() for optional fields"
        )
    return msg


class Cache:
    """cel.Cache: an LRU of compiled expressions shared across scheduling cycles."""

    def __init__(self, max_size: int = 10) -> None:
        self._max = max_size
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, CompilationResult] = OrderedDict()

    def get_or_compile(self, expression: str) -> CompilationResult:
        with self._lock:
            hit = self._entries.get(expression)
            if hit is not None:
                self._entries.move_to_end(expression)
                return hit
        from wasmsched.plugins.dynamicresources.celprogram import compile_expression

        result = compile_expression(expression)
        with self._lock:
            self._entries[expression] = result
            self._entries.move_to_end(expression)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return result
