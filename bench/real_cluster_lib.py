"""bench/real_cluster.py's pure helpers: the Prometheus text exposition (a histogram's buckets, a
counter's samples), histogram_quantile as Prometheus computes it, quantiles of raw samples, a process's
CPU time from /proc/PID/stat, and the per-scheduler summary (median over rounds, ratio to kube-scheduler).
No cluster, no clock: tests/bench/test_real_cluster_lib.py checks them on fixed inputs."""

from __future__ import annotations

import math
import os
import re
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?\s*$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')


def parse_samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    """Every sample of a text exposition (format 0.0.4) as (name, labels, value); comments and lines that
    are not samples are skipped. Label values keep their escapes but for \\" and \\\\."""
    out: list[tuple[str, dict[str, str], float]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m is None:
            continue
        name, raw_labels, raw_value = m.groups()
        try:
            value = float(raw_value)
        except ValueError:
            continue
        labels = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LABEL.findall(raw_labels or "")}
        out.append((name, labels, value))
    return out


def _matches(labels: Mapping[str, str], want: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in want.items())


def sample_sum(text: str, name: str, **labels: str) -> float:
    """The sum of every sample named `name` whose labels include `labels` (0 when there is none)."""
    return sum(v for n, lab, v in parse_samples(text) if n == name and _matches(lab, labels))


def histogram_buckets(text: str, name: str, **labels: str) -> list[tuple[float, float]]:
    """The cumulative buckets (upper bound, count) of histogram `name`, summed over every series whose
    labels include `labels` (as sum by (le) does), sorted by bound; +Inf last."""
    acc: dict[float, float] = {}
    for n, lab, v in parse_samples(text):
        if n != name + "_bucket" or "le" not in lab or not _matches(lab, labels):
            continue
        try:
            le = float(lab["le"])
        except ValueError:
            continue
        acc[le] = acc.get(le, 0.0) + v
    return sorted(acc.items())


def histogram_increase(before: Sequence[tuple[float, float]],
                       after: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The cumulative buckets of what a histogram observed between two scrapes (after minus before, per
    bound; a bound missing before counts from 0), for histogram_quantile over that window."""
    was = dict(before)
    return [(le, c - was.get(le, 0.0)) for le, c in sorted(after)]


def histogram_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float:
    """Prometheus' histogram_quantile (promql/quantile.go bucketQuantile) over cumulative buckets: the
    bucket holding rank q*total, linear interpolation within it (from 0 for the first bucket, if its
    bound is positive); the highest finite bound when the rank falls in +Inf. NaN without data."""
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    bs = sorted(buckets)
    if len(bs) < 2 or not math.isinf(bs[-1][0]):
        return math.nan
    # Counts that go down (a scrape mixing series) are made monotonic, as Prometheus does.
    fixed: list[tuple[float, float]] = []
    running = 0.0
    for le, c in bs:
        running = max(running, c)
        fixed.append((le, running))
    total = fixed[-1][1]
    if total == 0:
        return math.nan
    rank = q * total
    b = next(i for i, (_, c) in enumerate(fixed) if c >= rank)
    if b == len(fixed) - 1:
        return fixed[-2][0]
    if b == 0 and fixed[0][0] <= 0:
        return fixed[0][0]
    start, end, count = 0.0, fixed[b][0], fixed[b][1]
    if b > 0:
        start = fixed[b - 1][0]
        count -= fixed[b - 1][1]
        rank -= fixed[b - 1][1]
    if count == 0:
        return end
    return start + (end - start) * (rank / count)


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile of raw samples, linear between closest ranks (numpy's default); NaN when empty."""
    if not values:
        return math.nan
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def parse_proc_stat(text: str) -> tuple[int, int]:
    """(utime, stime) in clock ticks from /proc/PID/stat: every thread's, children not included. The
    command name (field 2) may hold spaces and parentheses, so fields are counted after its last ')'."""
    rest = text[text.rindex(")") + 2:].split()
    # rest[0] is field 3 (state); utime and stime are fields 14 and 15.
    return int(rest[11]), int(rest[12])


def process_cpu_seconds(pid: int) -> float | None:
    """user + system CPU seconds of a running process (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            utime, stime = parse_proc_stat(f.read())
    except (OSError, ValueError, IndexError):
        return None
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def count_lines(text: str, needle: str) -> int:
    return sum(1 for line in text.splitlines() if needle in line)


def _median(values: Sequence[float]) -> float:
    xs = [v for v in values if isinstance(v, (int, float)) and not math.isnan(v)]
    return statistics.median(xs) if xs else math.nan


def _ratio(a: float, b: float) -> float:
    return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan


# The summarised fields: (row key, ratio key or "" for none).
SUMMARY_FIELDS = (
    ("bind_pods_per_second", "binds_ratio"),
    ("cpu_ms_per_pod", "cpu_per_pod_ratio"),
    ("sli_p50_seconds", ""),
    ("sli_p99_seconds", "sli_p99_ratio"),
    ("watch_p50_seconds", ""),
    ("watch_p99_seconds", ""),
    ("pods_per_second", ""),
    ("cpu_seconds", ""),
    ("scheduled_events", ""),
    ("events_dropped", ""),
)


def summarize(rows: Sequence[Mapping[str, Any]], baseline: str) -> list[dict[str, Any]]:
    """Per scheduler (in first-seen order): the median over its rounds of each SUMMARY_FIELDS key, and
    the ratio of that median to the baseline scheduler's median (binds/s: higher is better; CPU per pod
    and SLI p99: lower is better)."""
    order: list[str] = []
    by: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if r["scheduler"] not in by:
            order.append(r["scheduler"])
        by.setdefault(r["scheduler"], []).append(r)
    medians = {s: {k: _median([float(r.get(k, math.nan)) for r in by[s]]) for k, _ in SUMMARY_FIELDS}
               for s in order}
    base = medians.get(baseline, {})
    out = []
    for s in order:
        m = medians[s]
        row: dict[str, Any] = {"scheduler": s, "rounds": len(by[s]),
                               "failed_rounds": sum(1 for r in by[s] if not r.get("complete", True)), **m}
        for k, ratio in SUMMARY_FIELDS:
            if ratio:
                row[ratio] = _ratio(m[k], base.get(k, math.nan))
        out.append(row)
    return out
