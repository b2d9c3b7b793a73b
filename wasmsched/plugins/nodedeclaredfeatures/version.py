"""Component versions, as k8s.io/apimachinery/pkg/util/version: the parsing and the comparison rules
that the node-declared-features framework applies to a feature's MaxVersion.

Semantic versions (exactly three components, optional pre-release and build metadata) compare with
semver precedence; generic ones (two or more components) compare by their numbers only, missing
components counting as zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# versionMatchRE and extraMatchRE of version.go; Go's `$` is the end of the text, hence fullmatch.
_VERSION_MATCH_RE = re.compile(r"\s*v?([0-9]+(?:\.[0-9]+)*)(.*)", re.DOTALL)
_EXTRA_MATCH_RE = re.compile(r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\s*")
_UINT_MAX = (1 << 64) - 1


def _parse_uint(s: str) -> int | None:
    """strconv.ParseUint(s, 10, 0): ASCII digits only, within 64 bits."""
    if not s or not s.isascii() or not s.isdigit():
        return None
    n = int(s)
    return n if n <= _UINT_MAX else None


@dataclass(frozen=True, slots=True)
class Version:
    components: tuple[int, ...]
    semver: bool
    pre_release: str = ""
    build_metadata: str = ""

    @property
    def major(self) -> int:
        return self.components[0]

    @property
    def minor(self) -> int:
        return self.components[1]

    @property
    def patch(self) -> int:
        return self.components[2] if len(self.components) > 2 else 0

    def add_minor(self, diff: int) -> Version:
        """AddMinor: MajorMinor(major, minor + diff), a generic major.minor version."""
        return Version((self.major, self.minor + diff), False)

    def __str__(self) -> str:
        out = ".".join(str(c) for c in self.components)
        if self.pre_release:
            out += "-" + self.pre_release
        if self.build_metadata:
            out += "+" + self.build_metadata
        return out

    def compare_internal(self, other: Version) -> int:
        """compareInternal: -1, 0 or 1."""
        v, o = self.components, other.components
        for a, b in zip(v, o, strict=False):
            if a != b:
                return 1 if a > b else -1
        # Extra components count only when not all zero ("1.4" equals "1.4.0").
        if len(o) < len(v) and any(v[len(o):]):
            return 1
        if len(o) > len(v) and any(o[len(v):]):
            return -1
        if not self.semver or not other.semver:
            return 0
        vp, op = self.pre_release, other.pre_release
        if vp == op:
            return 0
        if not vp:
            return 1
        if not op:
            return -1
        v_parts, o_parts = vp.split("."), op.split(".")
        for pa, pb in zip(v_parts, o_parts, strict=False):
            an, bn = _parse_uint(pa), _parse_uint(pb)
            if an is not None and bn is not None:
                if an != bn:
                    return 1 if an > bn else -1
                continue
            # Otherwise byte-wise string order, as Go compares strings.
            ab, bb = pa.encode(), pb.encode()
            if bb < ab:
                return 1
            if bb > ab:
                return -1
        if len(o_parts) < len(v_parts):
            return 1
        if len(o_parts) > len(v_parts):
            return -1
        return 0

    def greater_than(self, other: Version) -> bool:
        return self.compare_internal(other) == 1

    def less_than(self, other: Version) -> bool:
        return self.compare_internal(other) == -1

    def at_least(self, minimum: Version) -> bool:
        return self.compare_internal(minimum) != -1

    def equal_to(self, other: Version | None) -> bool:
        return other is not None and self.compare_internal(other) == 0


def _parse(s: str, semver: bool) -> Version:
    m = _VERSION_MATCH_RE.fullmatch(s)
    if m is None:
        raise ValueError(f"could not parse {_q(s)} as version")
    numbers, extra = m.group(1), m.group(2)
    parts = numbers.split(".")
    if (semver and len(parts) != 3) or (not semver and len(parts) < 2):
        raise ValueError(f"illegal version string {_q(s)}")
    comps: list[int] = []
    for i, comp in enumerate(parts):
        if (i == 0 or semver) and comp.startswith("0") and comp != "0":
            raise ValueError(f"illegal zero-prefixed version component {_q(comp)} in {_q(s)}")
        n = _parse_uint(comp)
        if n is None:
            raise ValueError(f"illegal non-numeric version component {_q(comp)} in {_q(s)}: "
                             f"strconv.ParseUint: parsing {_q(comp)}: value out of range")
        comps.append(n)
    pre_release = build_metadata = ""
    if semver and extra:
        em = _EXTRA_MATCH_RE.fullmatch(extra)
        if em is None:
            raise ValueError(f"could not parse pre-release/metadata ({extra}) in version {_q(s)}")
        pre_release, build_metadata = em.group(1) or "", em.group(2) or ""
        for comp in pre_release.split("."):
            if _parse_uint(comp) is not None and comp.startswith("0") and comp != "0":
                raise ValueError(f"illegal zero-prefixed version component {_q(comp)} in {_q(s)}")
    return Version(tuple(comps), semver, pre_release, build_metadata)


def _q(s: str) -> str:
    # Go's %q for the plain ASCII strings versions are made of.
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_semantic(s: str) -> Version:
    """ParseSemantic: exactly major.minor.patch, optional -pre-release and +metadata, a leading "v"."""
    return _parse(s, True)


def parse_generic(s: str) -> Version:
    """ParseGeneric: two or more numeric components; anything after them is ignored."""
    return _parse(s, False)


def parse(s: str) -> Version:
    """Parse: semantic when possible (keeping the pre-release), else generic."""
    try:
        return _parse(s, True)
    except ValueError:
        return _parse(s, False)
