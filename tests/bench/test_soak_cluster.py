"""bench/soak_cluster.py's verdict on fixed inputs (no cluster): the /metrics gauges it reads, the RSS
slope after warm-up, stores back to their level after deletion, no pinned or growing instances."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak_cluster", ROOT / "bench" / "soak_cluster.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["soak_cluster"] = mod
    spec.loader.exec_module(mod)
    return mod


soak = _load()

EXPOSITION = """\
# TYPE wasmsched_informer_store_objects gauge
wasmsched_informer_store_objects{resource="Node"} 3.0
wasmsched_informer_store_objects{resource="Pod"} 0.0
scheduler_cache_size{type="assumed_pods"} 0.0
scheduler_cache_size{type="pods"} 0.0
scheduler_pending_pods{queue="active"} 0.0
scheduler_pending_pods{queue="backoff"} 0.0
wasmsched_wasm_instances{plugin="NodeNumber",state="idle"} 1.0
wasmsched_wasm_instances{plugin="NodeNumber",state="scheduling"} 0.0
wasmsched_wasm_instances_created_total{plugin="NodeNumber"} 2.0
wasmsched_wasm_instances_discarded_total{plugin="NodeNumber"} 0.0
"""


def wave(i: int, rss: int, started: float, g: dict[str, Any]) -> dict[str, Any]:
    return {"wave": i, "pods_so_far": 1000 * (i + 1), "started_seconds": started, "complete": True,
            "rss_deleted_kib": rss, "deleted": g}


def test_gauges_read_the_exposition() -> None:
    g = soak.gauges(EXPOSITION)
    assert g["stores"] == {"Node": 3, "Pod": 0}
    assert g["cache"] == {"assumed_pods": 0, "pods": 0}
    assert g["instances"] == {"idle": 1, "scheduling": 0}
    assert (g["created"], g["discarded"]) == (2, 0)
    assert soak.forgotten(g, g)


def test_slope_is_least_squares_per_1000_pods() -> None:
    assert soak.slope_per_1000([(1000, 10), (2000, 12), (3000, 14)]) == 2.0
    assert math.isnan(soak.slope_per_1000([(1000, 10)]))


def test_theil_sen_ignores_one_outlier_and_gives_an_interval() -> None:
    points = [(1000.0 * i, 100.0) for i in range(10)]
    points[5] = (5000.0, 10_000.0)  # one wave read at a peak
    slope, lo, hi = soak.theil_sen_per_1000(points)
    assert slope == 0.0 and lo <= 0.0 <= hi
    assert soak.slope_per_1000(points) != 0.0  # least squares is dragged by it
    rising = [(1000.0 * i, 100.0 + 5 * i + (3 if i % 2 else -3)) for i in range(10)]
    slope, lo, hi = soak.theil_sen_per_1000(rising)
    assert 0 < lo <= slope <= hi and 4 <= slope <= 6
    assert all(math.isnan(x) for x in soak.theil_sen_per_1000([(1.0, 1.0), (2.0, 2.0)]))


def test_verdict_tells_flat_growing_and_unresolved_apart() -> None:
    g = soak.gauges(EXPOSITION)
    noisy = [wave(i, 120_000 + (4000 if i % 3 == 0 else 0), 200 + i, g) for i in range(3, 9)]
    v = soak.verdict(noisy, g, 2, 100.0, 3, True, 32, 1.0)
    assert v["rss"] == "unresolved" and v["leak"] and not v["rss_ok"]


def test_verdict_flat_after_warm_up_passes_and_growth_fails() -> None:
    g = soak.gauges(EXPOSITION)
    # Warm-up (waves 0, 1, and wave 2, which started before 100 s) may grow; after it RSS is flat.
    flat = [wave(0, 100_000, 0, g), wave(1, 110_000, 50, g), wave(2, 120_000, 90, g), wave(3, 120_000, 130, g),
            wave(4, 120_000, 170, g), wave(5, 120_000, 210, g)]
    v = soak.verdict(flat, g, 2, 100.0, 3, True, 32, 1.0)
    assert (v["post_warmup_waves"], v["slope_kib_per_1000_pods"], v["rss"], v["leak"]) == (3, 0.0, "flat", False)
    growing = [*flat[:3], wave(3, 121_000, 130, g), wave(4, 122_000, 170, g), wave(5, 123_000, 210, g)]
    v = soak.verdict(growing, g, 2, 100.0, 3, True, 32, 1.0)
    assert v["slope_kib_per_1000_pods"] == 1000.0 and v["rss"] == "growing" and v["leak"] and not v["rss_ok"]


def test_a_wave_that_met_a_node_heartbeat_is_reported_and_not_read() -> None:
    g = soak.gauges(EXPOSITION)
    # Every third wave meets all 3 nodes' heartbeat and is read while run still holds its burst, higher each
    # time (when the burst falls in the wave drifts); the other waves are flat.
    waves = [wave(0, 100_000, 0, g), wave(1, 110_000, 50, g)]
    for i in range(2, 20):
        beat = i % 3 == 0
        w = wave(i, 120_000 + (4000 + 500 * i if beat else 0), 100 + 40 * i, g)
        w["node_updates"] = 3 if beat else 0
        waves.append(w)
    v = soak.verdict(waves, g, 2, 100.0, 3, True, 32, 1.0)
    assert v["heartbeat_waves"] == [3, 6, 9, 12, 15, 18]
    assert (v["post_warmup_waves"], v["rss"], v["leak"]) == (12, "flat", False)
    assert v["heartbeat_theil_sen_kib_per_1000_pods"][0] == 500.0
    # A leak stays after the burst: the waves without a heartbeat show it.
    leaking = [dict(w, rss_deleted_kib=w["rss_deleted_kib"] + 2000 * w["wave"]) for w in waves]
    assert soak.verdict(leaking, g, 2, 100.0, 3, True, 32, 1.0)["rss"] == "growing"


def test_a_heartbeat_is_a_tenth_of_the_nodes_updated() -> None:
    assert not soak.heartbeat({"node_updates": 99}, 1000) and soak.heartbeat({"node_updates": 100}, 1000)
    assert not soak.heartbeat({"node_updates": 0}, 3) and soak.heartbeat({"node_updates": 1}, 3)
    assert not soak.heartbeat({}, 1000)  # a run recorded before node updates were counted


def test_verdict_names_a_store_that_kept_pods_and_a_pinned_instance() -> None:
    g = soak.gauges(EXPOSITION)
    kept = soak.gauges(EXPOSITION.replace('resource="Pod"} 0.0', 'resource="Pod"} 5.0')
                       .replace('state="scheduling"} 0.0', 'state="scheduling"} 1.0'))
    v = soak.verdict([wave(0, 1, 0, g), wave(1, 1, 10, kept)], g, 1, 0.0, 3, True, 32, 1.0)
    assert not v["stores_ok"] and "Pod store 5" in v["store_problems"][0]
    assert not v["instances_ok"] and "pinned" in v["instance_problems"][0]


def test_rss_after_a_deletion_is_the_median_of_its_settle_samples() -> None:
    series = [{"t": 1.0, "rss_kib": 500, "wave": 0, "phase": "delete"},
              *({"t": 2.0 + i, "rss_kib": kib, "wave": 0, "phase": "settle"} for i, kib in enumerate((130, 100, 101))),
              {"t": 9.0, "rss_kib": 700, "wave": 1, "phase": "settle"}]
    assert soak.settled_rss(series, 0) == 101
    assert soak.settled_rss(series, 2) is None
    g = soak.gauges(EXPOSITION)
    # Single readings that caught the scavenger's cycle at its top every other wave; the settled level is flat.
    waves = [{**wave(i, 120_000 + (3000 if i % 2 else 0), 200 + i, g), "rss_settled_kib": 118_000} for i in range(3, 9)]
    v = soak.verdict(waves, g, 2, 100.0, 3, True, 32, 1.0)
    assert v["rss"] == "flat" and v["rss_deleted_theil_sen_kib_per_1000_pods"] != [0.0, 0.0, 0.0]
    # A wave without a settle sample is read at its deletion's end.
    v = soak.verdict([{**w, "rss_settled_kib": None} for w in waves], g, 2, 100.0, 3, True, 32, 1.0)
    assert v["rss"] == "unresolved"


def test_jemalloc_argv_runs_a_command_on_jemalloc() -> None:
    """--jemalloc (here and in bench/real_cluster.py): the command runs on jemalloc, in its own process."""
    out = subprocess.run([*soak.jemalloc_argv(), sys.executable, "-c",
                          "import os; from wasmsched.util.heap import allocator; print(allocator(), os.getpid())"],
                         capture_output=True, text=True, check=True, timeout=60)
    name, _pid = out.stdout.split()
    assert name == "jemalloc"
    # The image's settings, not a second copy that drifts from them.
    conf = next(a for a in soak.jemalloc_argv() if a.startswith("MALLOC_CONF="))
    assert conf in (ROOT / "deploy" / "Containerfile").read_text()


def test_report_reads_an_earlier_run_and_its_settle_samples(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    g = soak.gauges(EXPOSITION)
    g["threads"] = 20
    # Recorded before rss_settled_kib: its readings caught the scavenger at its top every other wave; the series'
    # settle samples are flat.
    waves = [{**wave(i, 120_000 + (3000 if i % 2 else 0), 10.0 * i, g), "pods": 1000, "wave": i, "create_seconds": 1.0,
              "bind_seconds": 1.0, "delete_seconds": 1.0, "cpu_seconds": 1.0, "rss_bound_kib": 130_000, "bound": g}
             for i in range(8)]
    series = [{"t": float(i), "rss_kib": 118_000, "wave": i, "phase": "settle"} for i in range(8)]
    doc = {"nodes": 3, "pods": 8000, "wave": 1000, "warmup": 2, "warmup_seconds": 0.0, "qps": 1000, "guest": "g",
           "seconds": 100.0, "ready_seconds": 1.0, "rss_ready_kib": 100_000, "before": g, "waves": waves,
           "series": series}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    assert soak.main(["--report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "# soak of `wasmsched run` (default profile + NodeNumber guest): 3 nodes, 8000 of 8000 pods" in out
    assert "heartbeat: node updates were not counted in this run: every wave after warm-up is read" in out
    (rss,) = [line for line in out.splitlines() if line.startswith("rss: ")]
    assert rss.endswith(": flat"), rss
