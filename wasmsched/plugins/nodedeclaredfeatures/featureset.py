"""Feature sets as bitmaps over the registered feature names: component-helpers
nodedeclaredfeatures/bitmap.go and featureset.go.

Bit i stands for the i-th registered feature in sorted name order, so a pod's requirements and a
node's declared features compare with integer operations. Sets of different sizes (built against
different registries) never compare: that is an error, as in kube.
"""

from __future__ import annotations

from collections.abc import Sequence


class FeatureSet:
    """A fixed-size bitmap (bitmap / FeatureSet); `set` mutates it in place."""

    __slots__ = ("bits", "size")

    def __init__(self, size: int, bits: int = 0) -> None:
        if size < 0:
            raise ValueError(f"bitmap size must be positive: {size}")
        self.size = size
        self.bits = bits

    def _check(self, i: int) -> None:
        if i < 0 or i >= self.size:
            raise IndexError(f"bitmap index out of range: {i}")

    def set(self, i: int) -> None:
        self._check(i)
        self.bits |= 1 << i

    def get(self, i: int) -> bool:
        self._check(i)
        return bool(self.bits >> i & 1)

    def difference(self, other: FeatureSet) -> FeatureSet:
        """The bits set here and not in other."""
        if self.size != other.size:
            raise ValueError(f"bitmap size mismatch: {self.size} != {other.size}")
        return FeatureSet(self.size, self.bits & ~other.bits)

    def is_subset(self, other: FeatureSet) -> bool:
        """Whether every bit set here is set in other."""
        if self.size != other.size:
            raise ValueError(f"bitmap size mismatch; {self.size} != {other.size}")
        return not self.bits & ~other.bits

    def equal(self, other: FeatureSet) -> bool:
        return self.size == other.size and self.bits == other.bits

    def is_empty(self) -> bool:
        return not self.bits

    def clone(self) -> FeatureSet:
        return FeatureSet(self.size, self.bits)

    def __str__(self) -> str:
        """Bit 0 first: "10001" for bits 0 and 4 of a 5-bit set."""
        return "".join("1" if self.bits >> i & 1 else "0" for i in range(self.size))

    def __repr__(self) -> str:
        return f"FeatureSet({self})"


class FeatureMapper:
    """Maps feature names to bit positions (FeatureMapper); the names are kept sorted."""

    __slots__ = ("registered_features",)

    def __init__(self, features: Sequence[str]) -> None:
        self.registered_features: list[str] = sorted(features)

    def new_feature_set(self) -> FeatureSet:
        return FeatureSet(len(self.registered_features))

    def map_sorted(self, sorted_features: Sequence[str]) -> FeatureSet:
        """The set of sorted_features (which must be sorted); an unknown name is a ValueError."""
        return self._map_sorted(sorted_features, False)

    def must_map_sorted(self, sorted_features: Sequence[str]) -> FeatureSet:
        return self.map_sorted(sorted_features)

    def try_map(self, sorted_features: Sequence[str]) -> FeatureSet:
        """The set of the known names among sorted_features; unknown ones are dropped."""
        return self._map_sorted(sorted_features, True)

    def _map_sorted(self, sorted_features: Sequence[str], ignore_unknown: bool) -> FeatureSet:
        # A merge walk over two sorted lists, as kube does: an input that is not sorted maps only the
        # names the walk meets, exactly as kube's mapSorted would.
        registered = self.registered_features
        s = self.new_feature_set()
        bits = 0
        i = j = 0
        n, m = len(sorted_features), len(registered)
        while i < n and j < m:
            a, b = sorted_features[i], registered[j]
            if a == b:
                bits |= 1 << j
                i += 1
                j += 1
            elif a < b:  # code-point order is Go's byte order of the UTF-8 strings
                if not ignore_unknown:
                    raise ValueError(f"unknown feature {a}")
                i += 1
            else:
                j += 1
        s.bits = bits
        if not ignore_unknown and i < n:
            raise ValueError(f"unknown feature {sorted_features[i]}")
        return s

    def unmap(self, s: FeatureSet) -> list[str]:
        """The names of the features set in s, sorted."""
        if s.size != len(self.registered_features):
            raise ValueError(f"feature size mismatch! s.size={s.size}; "
                             f"len(m.registeredFeatures)={len(self.registered_features)}")
        return [name for i, name in enumerate(self.registered_features) if s.bits >> i & 1]

