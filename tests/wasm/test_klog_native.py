"""The native host's guest klog lines are util/klog.py's, byte for byte.

The format has one definition, Python's: Host.guest_record makes a guest line's record and util/klog.py's
KlogFormatter formats it. The native host (wasm/_host.c) writes the same bytes without making a record
(one write per guest call); the severity letters, pid, source and tail it is given by Python, the time
layout and JSON's quoting it repeats, and these tests hold it to the Python formatter on many records:
quotes, backslashes, control characters, DEL, NUL, non-ASCII and astral characters, newlines inside and at
the end, odd key/value counts, empty values, bytes after the last NUL, out-of-range severities, times
across years. Times are mid-microsecond: LogRecord.created is a float, whose rounding stays inside it.
"""

from __future__ import annotations

import random

import pytest

from wasmsched.util.klog import KlogFormatter
from wasmsched.wasm import native
from wasmsched.wasm.host import Host

CHARS = ["a", "Z", "0", " ", "=", '"', "\\", "/", "<", "'", "\n", "\r", "\t", "\b", "\f", "\x01", "\x1f", "\x7f",
         "\x00", "é", "€", "\u2028", "\ufeff", "😀", "日本"]
# 2020-01-01 .. 2030-01-01 in nanoseconds
T0, T1 = 1_577_836_800 * 10**9, 1_893_456_000 * 10**9


def _text(rng: random.Random, nul: bool = True) -> str:
    chars = CHARS if nul else [c for c in CHARS if c != "\x00"]
    return "".join(rng.choice(chars) for _ in range(rng.randrange(0, 12)))


def _kvs(rng: random.Random) -> bytes | None:
    """None (klog.log) or klog.logs' NUL-terminated entries, sometimes none, odd or with a tail."""
    if rng.random() < 0.3:
        return None
    entries = [_text(rng, nul=False) for _ in range(rng.randrange(0, 6))]
    raw = b"".join(e.encode() + b"\0" for e in entries)
    if rng.random() < 0.2:
        raw += _text(rng, nul=False).encode()  # after the last NUL: ignored
    return raw


def _python_line(host: Host, severity: int, msg: bytes, kvs: bytes | None, time_ns: int) -> bytes:
    record = host.guest_record(severity, msg, kvs)
    record.created = time_ns / 1e9
    return (KlogFormatter().format(record) + "\n").encode()


@pytest.mark.parametrize("plugin", ["NodeNumber", 'odd "name" \\ é'])
def test_native_lines_are_klog_formatters_lines(plugin: str) -> None:
    host = Host(plugin, "", 0, None)
    aux = host.klog_aux()
    rng = random.Random(plugin)
    compared = 0
    for _ in range(3000):
        severity = rng.randrange(-3, 7)
        msg = _text(rng).encode()
        if rng.random() < 0.2:
            msg += b"\n"
        kvs = _kvs(rng)
        time_ns = rng.randrange(T0, T1) // 1000 * 1000 + 500
        expected = _python_line(host, severity, msg, kvs, time_ns)
        got = native.klog_line(severity, msg, kvs, time_ns, aux)
        assert got == expected, (severity, msg, kvs, time_ns)
        compared += 1
    assert compared == 3000


def test_lines_that_are_not_utf8_are_left_to_python() -> None:
    """Python's decoder replaces what is not UTF-8; the native host leaves those lines to it."""
    host = Host("p", "", 0, None)
    aux = host.klog_aux()
    for msg, kvs in [(b"\xff", None), (b"ok", b"k\0\xc3(\0"), (b"\xed\xa0\x80", None), (b"\xc0\xaf", b"")]:
        assert native.klog_line(0, msg, kvs, T0 + 500, aux) is None
    assert b"\xef\xbf\xbd" in _python_line(host, 0, b"\xff", None, T0 + 500)


def test_edge_records() -> None:
    host = Host("p", "", 0, None)
    aux = host.klog_aux()
    cases: list[tuple[int, bytes, bytes | None]] = [
        (0, b"", None), (0, b"\n", None), (0, b"\n\n", None), (0, b"x\n", b""), (0, b"x\n", b"k\0"),
        (1, b"m", b"\0\0"), (2, b"m", b"k\0v\0k2\0"), (3, b"m", b"junk"),
        (-(2**31), b"m", None), (2**31 - 1, b"m", None),
    ]
    for t in (T0 + 500, T0 + 999_999_500, T1 - 500):
        for severity, msg, kvs in cases:
            assert native.klog_line(severity, msg, kvs, t, aux) == _python_line(host, severity, msg, kvs, t)
