"""JSON forms of the apimachinery wire types: RFC3339 times and Go duration strings.

Kubernetes serializes metav1.Time as RFC3339 in UTC at second precision, metav1.MicroTime at
microsecond precision and metav1.Duration as Go's time.Duration.String(); these helpers convert
between those strings and the protobuf (seconds, nanos) / nanosecond integers.
"""

from __future__ import annotations

import calendar
import re
import time
from fractions import Fraction

from wasmsched.util.intbounds import INT64_MAX

_RFC3339_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)
_DURATION_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # U+00B5 micro sign
    "\u03bcs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_DURATION_PART_RE = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]+)")


def parse_rfc3339(text: str) -> tuple[int, int]:
    """Parse an RFC3339 timestamp into (unix seconds, nanos); raises ValueError like time.Parse."""
    m = _RFC3339_RE.match(text)
    if m is None:
        raise ValueError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse')
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 60):
        raise ValueError(f'parsing time "{text}": value out of range')
    if day > calendar.monthrange(year, month)[1]:
        raise ValueError(f'parsing time "{text}": day out of range')
    frac = m.group(7)
    nanos = int((frac[1:] + "000000000")[:9]) if frac else 0
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    zone = m.group(8)
    if zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        seconds -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return seconds, nanos


def format_rfc3339(seconds: int, nanos: int = 0, micro: bool = False) -> str:
    """Render (seconds, nanos) as Kubernetes does: UTC, seconds precision or microseconds for MicroTime."""
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    if micro:
        return f"{base}.{nanos // 1000:06d}Z"
    return base + "Z"


def now_rfc3339(micro: bool = False) -> str:
    """The current time as metav1.Time (seconds) or metav1.MicroTime (micro=True) serializes it."""
    ns = time.time_ns()
    return format_rfc3339(ns // 1_000_000_000, ns % 1_000_000_000, micro=micro)


def parse_go_duration(text: str) -> int:
    """Parse a Go duration string ("1h2m3.5s", "-90s", "0") into nanoseconds, like time.ParseDuration."""
    err = ValueError(f'time: invalid duration "{text}"')
    s = text
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise err
    total = Fraction(0)
    pos = 0
    while pos < len(s):
        m = _DURATION_PART_RE.match(s, pos)
        if m is None:
            raise err
        whole, frac, unit = m.group(1), m.group(2), m.group(3)
        if not whole and not frac:
            raise err
        # the unit runs until the next digit or dot; it must be one Go knows
        scale = _DURATION_UNITS.get(unit)
        if scale is None:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{text}"')
        number = Fraction(int(whole or "0"))
        if frac:
            number += Fraction(int(frac), 10 ** len(frac))
        total += number * scale
        pos = m.end()
    nanos = int(total)
    if nanos > INT64_MAX + (1 if neg else 0):
        raise err
    return -nanos if neg else nanos


def _frac_digits(value: int, prec: int) -> str:
    """value / 10**prec with trailing fractional zeros (and a bare point) dropped, like Go's fmtFrac."""
    whole, frac = divmod(value, 10**prec)
    digits = f"{frac:0{prec}d}".rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def format_go_duration(nanos: int) -> str:
    """Render nanoseconds like Go's time.Duration.String() ("1h2m3s", "1.5s", "300ms", "0s")."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    u = abs(nanos)
    if u < 1_000:
        return f"{sign}{u}ns"
    if u < 1_000_000:
        return f"{sign}{_frac_digits(u, 3)}\u00b5s"
    if u < 1_000_000_000:
        return f"{sign}{_frac_digits(u, 6)}ms"
    secs, frac = divmod(u, 1_000_000_000)
    out = _frac_digits((secs % 60) * 1_000_000_000 + frac, 9) + "s"
    minutes = secs // 60
    if minutes:
        out = f"{minutes % 60}m" + out
        hours = minutes // 60
        if hours:
            out = f"{hours}h" + out
    return sign + out
