"""bench/real_cluster_lib.py: the exposition parser, histogram_quantile as Prometheus computes it, raw
quantiles, /proc/PID/stat and the per-scheduler summary (fixed inputs, no cluster, no timings)."""

from __future__ import annotations

import importlib.util
import math
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_cluster_lib", ROOT / "bench" / "real_cluster_lib.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["real_cluster_lib"] = mod
    spec.loader.exec_module(mod)
    return mod


lib = _load()

# What kube-scheduler serves: two series of one histogram (attempts="1" and "2"), a counter, comments.
EXPOSITION = """\
# HELP scheduler_pod_scheduling_sli_duration_seconds [BETA] E2e latency for a pod being scheduled...
# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.01"} 10
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.02"} 50
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.04"} 90
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="+Inf"} 90
scheduler_pod_scheduling_sli_duration_seconds_sum{attempts="1"} 1.8
scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"} 90
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="2",le="0.01"} 0
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="2",le="0.02"} 0
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="2",le="0.04"} 4
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="2",le="+Inf"} 10
scheduler_pod_scheduling_sli_duration_seconds_count{attempts="2"} 10
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="s0x1",result="scheduled"} 100
scheduler_schedule_attempts_total{profile="s0x1",result="unschedulable"} 2
scheduler_schedule_attempts_total{profile="a \\"quoted\\", one",result="scheduled"} 7 1700000000000
"""
SLI = "scheduler_pod_scheduling_sli_duration_seconds"


def test_histogram_buckets_are_summed_over_series_and_sorted() -> None:
    assert lib.histogram_buckets(EXPOSITION, SLI) == [(0.01, 10.0), (0.02, 50.0), (0.04, 94.0),
                                                      (math.inf, 100.0)]
    assert lib.histogram_buckets(EXPOSITION, SLI, attempts="2") == [(0.01, 0.0), (0.02, 0.0), (0.04, 4.0),
                                                                    (math.inf, 10.0)]
    assert lib.histogram_buckets(EXPOSITION, "nothing") == []


def test_counter_samples_by_label_with_escapes_and_timestamps() -> None:
    assert lib.sample_sum(EXPOSITION, "scheduler_schedule_attempts_total", result="scheduled") == 107
    assert lib.sample_sum(EXPOSITION, "scheduler_schedule_attempts_total", profile="s0x1") == 102
    assert lib.sample_sum(EXPOSITION, "scheduler_schedule_attempts_total", profile='a "quoted", one') == 7
    assert lib.sample_sum(EXPOSITION, "scheduler_schedule_attempts_total", result="error") == 0


def test_histogram_increase_is_what_was_observed_between_two_scrapes() -> None:
    before = [(0.01, 4.0), (0.02, 6.0), (0.04, 6.0), (math.inf, 6.0)]
    after = [(0.01, 5.0), (0.02, 15.0), (0.04, 18.0), (math.inf, 20.0)]
    window = lib.histogram_increase(before, after)
    assert window == [(0.01, 1.0), (0.02, 9.0), (0.04, 12.0), (math.inf, 14.0)]
    # rank 7 of 14 falls in (0.01, 0.02], which holds observations 2..9
    assert lib.histogram_quantile(0.5, window) == pytest.approx(0.01 + 0.01 * (7 - 1) / (9 - 1))
    assert lib.histogram_increase([], after) == after  # a series first seen in the second scrape


def test_histogram_quantile_interpolates_within_the_bucket_like_prometheus() -> None:
    b = lib.histogram_buckets(EXPOSITION, SLI)
    # rank 50 is the whole of the second bucket: its upper bound
    assert lib.histogram_quantile(0.5, b) == pytest.approx(0.02)
    # rank 5 of the first bucket (10 observations in (0, 0.01]): halfway from 0
    assert lib.histogram_quantile(0.05, b) == pytest.approx(0.005)
    # rank 70: 20 of the third bucket's 44 observations in (0.02, 0.04]
    assert lib.histogram_quantile(0.7, b) == pytest.approx(0.02 + 0.02 * 20 / 44)
    # rank 99 falls in +Inf: the highest finite bound
    assert lib.histogram_quantile(0.99, b) == pytest.approx(0.04)
    assert lib.histogram_quantile(-0.1, b) == -math.inf and lib.histogram_quantile(1.1, b) == math.inf
    assert math.isnan(lib.histogram_quantile(0.5, [(0.1, 0.0), (math.inf, 0.0)]))
    assert math.isnan(lib.histogram_quantile(0.5, [(0.1, 3.0)]))  # no +Inf bucket
    assert math.isnan(lib.histogram_quantile(0.5, []))


def test_raw_quantiles_are_linear_between_ranks() -> None:
    xs = [4.0, 1.0, 3.0, 2.0]
    assert lib.quantile(xs, 0.5) == pytest.approx(2.5)
    assert lib.quantile(xs, 0.0) == 1.0 and lib.quantile(xs, 1.0) == 4.0
    assert lib.quantile([float(i) for i in range(101)], 0.99) == pytest.approx(99.0)
    assert math.isnan(lib.quantile([], 0.5))


def test_proc_stat_fields_count_from_the_last_parenthesis() -> None:
    text = "4242 (kube (sched) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 8 9 20 0 12 0 99 0 0\n"
    assert lib.parse_proc_stat(text) == (1234, 567)
    own = lib.process_cpu_seconds(os.getpid())
    assert own is not None and own >= 0
    assert lib.count_lines("a\nE Event dropped: x\nEvent dropped\nb", "Event dropped") == 2


def test_summary_is_the_median_over_rounds_with_ratios_to_the_baseline() -> None:
    rows = [
        {"scheduler": "kube", "bind_pods_per_second": 100.0, "cpu_ms_per_pod": 2.0, "sli_p99_seconds": 0.1},
        {"scheduler": "ws", "bind_pods_per_second": 40.0, "cpu_ms_per_pod": 10.0, "sli_p99_seconds": 0.3},
        {"scheduler": "kube", "bind_pods_per_second": 300.0, "cpu_ms_per_pod": 4.0, "sli_p99_seconds": 0.3},
        {"scheduler": "ws", "bind_pods_per_second": 60.0, "cpu_ms_per_pod": 14.0, "sli_p99_seconds": 0.5,
         "complete": False},
    ]
    kube, ws = lib.summarize(rows, "kube")
    assert (kube["scheduler"], kube["rounds"], kube["bind_pods_per_second"]) == ("kube", 2, 200.0)
    assert kube["binds_ratio"] == pytest.approx(1.0)
    assert (ws["bind_pods_per_second"], ws["cpu_ms_per_pod"], ws["failed_rounds"]) == (50.0, 12.0, 1)
    assert ws["binds_ratio"] == pytest.approx(0.25)
    assert ws["cpu_per_pod_ratio"] == pytest.approx(4.0)
    assert ws["sli_p99_ratio"] == pytest.approx(2.0)
    assert math.isnan(ws["watch_p99_seconds"])  # not measured in these rows
    assert math.isnan(lib.summarize(rows, "absent")[1]["binds_ratio"])
