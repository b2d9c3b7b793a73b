"""Go time.Duration text: parse ("1m30s", "250ms") and format (Duration.String())."""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds from a Go duration string; raises ValueError like time.ParseDuration."""
    s = text.strip()
    sign = -1.0 if s.startswith("-") else 1.0
    s = s.lstrip("+-")
    if s == "0":
        return 0.0
    pos, total = 0, 0.0
    if not s:
        raise ValueError(f'time: invalid duration "{text}"')
    while pos < len(s):
        m = _PART.match(s, pos)
        if not m:
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return sign * total


def format_duration(seconds: float) -> str:
    """As Go's Duration.String(): 1h2m3s, 1.5s, 250ms, 0s."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    neg, ns = ns < 0, abs(ns)
    if ns < 1_000_000_000:
        for unit, div in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= div:
                out = _trim(ns / div) + unit
                break
    else:
        h, rem = divmod(ns, 3_600_000_000_000)
        m, rem = divmod(rem, 60_000_000_000)
        out = (f"{h}h" if h else "") + (f"{m}m" if h or m else "") + _trim(rem / 1e9) + "s"
    return "-" + out if neg else out


def _trim(v: float) -> str:
    return f"{v:.9f}".rstrip("0").rstrip(".")
