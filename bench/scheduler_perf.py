"""scheduler_perf's SchedulingBasic on wasmsched next to kube-scheduler 1.37.2 (bench/kube), default profile;
optionally with KSWE's NodeNumber wasm guest on both wasmsched and KSWE's own Go host (bench/kswe_perf).

The workload is kube's test/integration/scheduler_perf SchedulingBasic at issue 13's sizes: N nodes
(32 cpu, 256Gi, 110 pods, Ready), then M pods (one pause container, 100m / 500Mi requested and limited).
Each run is a fresh process; it creates the nodes, then times from the first pod's creation until all M
pods are bound. Every host reports the same fields:

- pods/s: M / that time;
- attempt latency p50/p99 (ms, exact, nearest rank): from the pod leaving the queue until its binding is
  applied, what kube's scheduling_attempt_duration_seconds measures;
- time per extension point: framework_extension_point_duration_seconds (sum / count; both hosts observe
  it the same way, Filter over the whole node walk), in µs per pod;
- CPU ms/pod: the process's user + system CPU time over the same interval, per pod (steadier than wall
  time when other work competes for the cores; kube-scheduler's includes its second core at GOMAXPROCS 2);
- peak RSS of the process (getrusage maxrss).

wasmsched runs what `wasmsched simulate` runs (load_config, the in-tree registry plus wasm plugins,
Simulation), in a child `python` per run, with metrics on, as kube-scheduler always has them (they cost
wasmsched about a fifth of its CPU time at 500 nodes; --no-metrics leaves them off, as `simulate` does
by default).
kube-scheduler runs at GOMAXPROCS 1 and 2 (it uses the second core for binding and its parallel
Filter/Score; wasmsched schedules on one thread). Rounds are interleaved: every variant runs once per
round, in turn. The table shows the median and the best (min time) of the rounds.

With --kswe PATH (a KSWE checkout at 9b2791f1bbea) the NodeNumber guest
(internal/e2e/scheduler_perf/wasm/nodenumber/main.wasm) is added to the default profile as a wasm plugin
on wasmsched and on KSWE's host (kube-scheduler v1.33.4 with KSWE's wasm plugin, built from the checkout),
and "time NodeNumber adds per pod" = (time with - time without) / pods on each host. The same is measured
for KSWE's examples/nodenumber with logSeverity 0 (a klog Info line per Score, an event per PreScore):
wasmsched logs as `simulate` does (the klog handler on stderr, which the driver discards), KSWE's host
formats each line with klog, whose output the program discards. Without --kswe those variants are
skipped and the report says so.

    tools/kube/build.sh bench-kube
    .venv/bin/python bench/scheduler_perf.py [--sizes 500x1000,5000x1000] [--rounds 3] [--kswe PATH] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import (  # noqa: E402  (bench/ is not a package; its helpers are found through sys.path)
    build_kswe_program,
    go_cache_binary,
    kswe_guest,
    load_avg,
    scheduling_basic,
    write_results,
)

NODENUMBER = "NodeNumber"
LOGGING_NODENUMBER = "wasmsched + NodeNumber logSeverity 0"
KSWE_LOGGING_GUEST = "examples/nodenumber/main.wasm"


# ----- the workload: benchlib.scheduling_basic, in a configuration ---------------------------------------

def nodenumber_config(guest: Path, log_severity: int | None = None) -> dict[str, Any]:
    """The default profile plus the guest, as KSWE's sched-config-wasm-only.yaml adds it (multiPoint, weight 1)."""
    args: dict[str, Any] = {"guestURL": str(guest)}
    if log_severity is not None:
        args["logSeverity"] = log_severity
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": NODENUMBER}]}},
            "pluginConfig": [{"name": NODENUMBER, "args": args}],
        }],
    }


# ----- the wasmsched worker (one run, in its own process) -------------------------------------------

def percentile(sorted_values: Sequence[float], p: int) -> float:
    """Nearest rank, as bench/kube's percentile."""
    if not sorted_values:
        return 0.0
    rank = max(1, -(-p * len(sorted_values) // 100))
    return sorted_values[rank - 1]


def worker(nodes: int, pods: int, guest: Path | None, metrics_on: bool, log_severity: int | None = None
           ) -> dict[str, Any]:
    setup_start = time.perf_counter()
    from wasmsched.cli.logs import setup_logging
    from wasmsched.config import config_from_dict, load_config
    from wasmsched.plugins.registry import in_tree_registry
    from wasmsched.simulator.simulation import Simulation
    from wasmsched.wasm.plugin import register_wasm_plugins

    setup_logging(0)  # as `simulate` logs: a guest's Info lines on stderr (the driver discards it)
    cfg = load_config(None) if guest is None else config_from_dict(nodenumber_config(guest, log_severity))
    registry = in_tree_registry()
    register_wasm_plugins(registry, cfg)
    metrics = None
    if metrics_on:
        from wasmsched.metrics.metrics import SchedulerMetrics

        metrics = SchedulerMetrics()
    sim = Simulation(cfg, registry, metrics=metrics)
    node_objs, pod_objs = scheduling_basic(nodes, pods)
    sim.apply({"Node": node_objs})

    # An attempt is one schedule_one that popped a pod: with the simulator's inline binding
    # (binding_workers=0) it ends once the binding is applied, as kube's attempt latency does.
    latencies: list[float] = []
    inner: Callable[[], bool] = sim.scheduler.schedule_one

    def timed_schedule_one() -> bool:
        t0 = time.perf_counter()
        popped = inner()
        if popped:
            latencies.append((time.perf_counter() - t0) * 1000)
        return popped

    sim.scheduler.schedule_one = timed_schedule_one  # type: ignore[method-assign]
    setup = time.perf_counter() - setup_start

    cpu_start = cpu_seconds()
    start = time.perf_counter()
    sim.apply({"Pod": pod_objs})
    created = time.perf_counter() - start
    result = sim.run_until_quiet()
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds() - cpu_start
    bound = result.count("Scheduled")
    wasm_counters = result.extra_summary.get("wasm", {})
    sim.scheduler.close()
    latencies.sort()
    return {
        "host": "wasmsched", "nodes": nodes, "pods": pods, "bound": bound, "metrics": metrics_on,
        "setup_seconds": setup, "seconds": elapsed, "create_seconds": created, "cpu_seconds": cpu,
        "pods_per_second": pods / elapsed,
        "attempt_latency_ms": {"p50": percentile(latencies, 50), "p99": percentile(latencies, 99),
                               "mean": statistics.fmean(latencies) if latencies else 0.0},
        "extension_points": extension_points(metrics) if metrics is not None else {},
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "wasm": wasm_counters,
    }


def cpu_seconds() -> float:
    """The process's user + system CPU time: unlike wall time, it hardly moves when other processes compete
    for the cores (kube-scheduler's includes its second core's work at GOMAXPROCS 2)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def extension_points(metrics: Any) -> dict[str, dict[str, float]]:
    """framework_extension_point_duration_seconds summed over status and profile, as bench/kube gathers it."""
    out: dict[str, dict[str, float]] = {}
    for family in metrics.registry.collect():
        if family.name != "scheduler_framework_extension_point_duration_seconds":
            continue
        for s in family.samples:
            point = s.labels.get("extension_point", "")
            ep = out.setdefault(point, {"count": 0, "total_seconds": 0.0})
            if s.name.endswith("_count"):
                ep["count"] += int(s.value)
            elif s.name.endswith("_sum"):
                ep["total_seconds"] += s.value
    for ep in out.values():
        ep["mean_us"] = ep["total_seconds"] / ep["count"] * 1e6 if ep["count"] else 0.0
    return out


# ----- the driver ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Variant:
    name: str          # table row
    host: str          # wasmsched, kube-scheduler, kswe
    argv: Callable[[int, int], list[str]]
    env: dict[str, str]
    nodenumber: bool = False


def run_once(v: Variant, nodes: int, pods: int, timeout: float) -> dict[str, Any]:
    proc = subprocess.run(v.argv(nodes, pods), capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **v.env}, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{v.name} {nodes}x{pods} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    doc: dict[str, Any] = json.loads(lines[-1])
    if doc.get("bound") != pods:
        raise RuntimeError(f"{v.name} {nodes}x{pods}: {doc.get('bound')} of {pods} pods bound")
    return doc


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    secs = [r["seconds"] for r in runs]
    pods = runs[0]["pods"]
    med = statistics.median
    points = sorted({p for r in runs for p in r.get("extension_points", {})})
    return {
        "rounds": len(runs),
        "seconds": {"min": min(secs), "median": med(secs)},
        "pods_per_second": {"best": pods / min(secs), "median": pods / med(secs)},
        "cpu_ms_per_pod": {"min": min(r["cpu_seconds"] for r in runs) * 1000 / pods,
                           "median": med(r["cpu_seconds"] for r in runs) * 1000 / pods},
        "attempt_latency_ms": {k: med(r["attempt_latency_ms"][k] for r in runs) for k in ("p50", "p99", "mean")},
        # µs per pod spent in each extension point (median over rounds).
        "extension_point_us_per_pod": {
            p: med(r["extension_points"].get(p, {}).get("total_seconds", 0.0) * 1e6 / pods for r in runs)
            for p in points},
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "setup_seconds": med(r["setup_seconds"] for r in runs),
        "runs": runs,
    }


def variants(kube_bin: Path, kswe_bin: Path | None, guest: Path | None, procs: Sequence[int],
             metrics: bool, log_guest: Path | None = None) -> list[Variant]:
    py = [sys.executable, str(Path(__file__).resolve()), "--worker", *([] if metrics else ["--no-metrics"])]
    out = [Variant("wasmsched", "wasmsched", lambda n, p: [*py, f"--nodes={n}", f"--pods={p}"], {})]
    out.extend(Variant(f"kube-scheduler GOMAXPROCS={gp}", "kube-scheduler",
                       lambda n, p: [str(kube_bin), f"-nodes={n}", f"-pods={p}"], {"GOMAXPROCS": str(gp)})
               for gp in procs)
    if guest is not None:
        g = str(guest)
        out.append(Variant("wasmsched + NodeNumber", "wasmsched",
                           lambda n, p: [*py, f"--nodes={n}", f"--pods={p}", f"--guest={g}"], {}, nodenumber=True))
    if kswe_bin is not None and guest is not None:
        g = str(guest)
        for gp in procs:
            out.append(Variant(f"KSWE host GOMAXPROCS={gp}", "kswe",
                               lambda n, p: [str(kswe_bin), f"-nodes={n}", f"-pods={p}"], {"GOMAXPROCS": str(gp)}))
            out.append(Variant(f"KSWE host + NodeNumber GOMAXPROCS={gp}", "kswe",
                               lambda n, p: [str(kswe_bin), f"-nodes={n}", f"-pods={p}", f"-guest={g}"],
                               {"GOMAXPROCS": str(gp)}, nodenumber=True))
    if log_guest is not None:
        # KSWE's examples/nodenumber: a klog line per Score and an event per PreScore, every line emitted.
        lg = str(log_guest)
        out.append(Variant(LOGGING_NODENUMBER, "wasmsched",
                           lambda n, p: [*py, f"--nodes={n}", f"--pods={p}", f"--guest={lg}", "--log-severity=0"], {},
                           nodenumber=True))
        if kswe_bin is not None:
            out.append(Variant(f"KSWE host {LOGGING_NODENUMBER.split(' ', 1)[1]} GOMAXPROCS=1", "kswe",
                               lambda n, p: [str(kswe_bin), f"-nodes={n}", f"-pods={p}", f"-guest={lg}",
                                             "-log-severity=0"], {"GOMAXPROCS": "1"}, nodenumber=True))
    return out


def nodenumber_cost(summaries: dict[str, dict[str, Any]], pods: int) -> dict[str, dict[str, float]]:
    """ms NodeNumber adds per pod on each host: (median time with - median time without) / pods, in wall
    time and in the process's CPU time (the steadier of the two on a busy machine)."""
    out = {}
    pairs = [("wasmsched", "wasmsched + NodeNumber", "wasmsched"),
             ("wasmsched", LOGGING_NODENUMBER, "wasmsched, logging guest"),
             ("KSWE host GOMAXPROCS=1", f"KSWE host {LOGGING_NODENUMBER.split(' ', 1)[1]} GOMAXPROCS=1",
              "KSWE host GOMAXPROCS=1, logging guest")]
    pairs += [(f"KSWE host GOMAXPROCS={gp}", f"KSWE host + NodeNumber GOMAXPROCS={gp}", f"KSWE host GOMAXPROCS={gp}")
              for gp in (1, 2)]
    for base, with_nn, label in pairs:
        if base in summaries and with_nn in summaries:
            b, w = summaries[base], summaries[with_nn]
            out[label] = {"wall_ms": 1000 * (w["seconds"]["median"] - b["seconds"]["median"]) / pods,
                          "cpu_ms": w["cpu_ms_per_pod"]["median"] - b["cpu_ms_per_pod"]["median"]}
    return out


def print_table(size: str, summaries: dict[str, dict[str, Any]]) -> None:
    print(f"\nSchedulingBasic {size}")
    print(f"{'variant':<40} {'pods/s med':>10} {'best':>7} {'CPU ms/pod':>10} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'RSS MB':>7}  "
          "extension points, µs/pod (median)")
    for name, s in summaries.items():
        eps = s["extension_point_us_per_pod"]
        top = ", ".join(f"{p} {eps[p]:.0f}" for p in ("PreFilter", "Filter", "PreScore", "Score", "Bind") if p in eps)
        print(f"{name:<40} {s['pods_per_second']['median']:>10.0f} {s['pods_per_second']['best']:>7.0f} "
              f"{s['cpu_ms_per_pod']['median']:>10.2f} "
              f"{s['attempt_latency_ms']['p50']:>7.2f} {s['attempt_latency_ms']['p99']:>7.2f} "
              f"{s['peak_rss_mb']:>7.0f}  {top}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="500x1000,5000x1000", help="NODESxPODS,... (default: %(default)s)")
    ap.add_argument("--nodenumber-sizes", default="500x1000",
                    help="sizes that also run the NodeNumber variants (needs --kswe; default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--procs", default="1,2", help="kube-scheduler's GOMAXPROCS values (default: %(default)s)")
    ap.add_argument("--kswe", type=Path, help="a kube-scheduler-wasm-extension checkout (commit 9b2791f1bbea)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds one run may take")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "scheduler_perf.json")
    # One measured run of wasmsched, printed as one JSON line (the driver starts these).
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--nodes", type=int, default=500, help=argparse.SUPPRESS)
    ap.add_argument("--pods", type=int, default=1000, help=argparse.SUPPRESS)
    ap.add_argument("--guest", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--log-severity", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--no-metrics", action="store_true",
                    help="wasmsched without its metrics, as `simulate` runs by default (no extension-point times; "
                         "kube-scheduler always has them)")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.nodes, args.pods, args.guest, not args.no_metrics, args.log_severity)))
        return 0

    procs = [int(x) for x in args.procs.split(",")]
    sizes = args.sizes.split(",")
    nn_sizes = set(args.nodenumber_sizes.split(",")) if args.kswe else set()
    kube_bin = go_cache_binary("bench-kube")
    guest = kswe_bin = None
    notes = []
    if args.kswe:
        guest = kswe_guest(args.kswe)
        kswe_bin = build_kswe_host(args.kswe)
        if kswe_bin is None:
            notes.append("KSWE host not built: the KSWE NodeNumber rows are missing")
    else:
        notes.append("no --kswe: the NodeNumber variants (wasmsched and KSWE's host) were not run")
    log_guest = args.kswe / KSWE_LOGGING_GUEST if args.kswe and (args.kswe / KSWE_LOGGING_GUEST).is_file() else None
    all_variants = variants(kube_bin, kswe_bin, guest, procs, not args.no_metrics, log_guest)
    load_before = load_avg()
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {s: {} for s in sizes}
    for rnd in range(args.rounds):
        for size in sizes:
            n, p = (int(x) for x in size.split("x"))
            for v in all_variants:
                if v.nodenumber and size not in nn_sizes:
                    continue
                doc = run_once(v, n, p, args.timeout)
                runs[size].setdefault(v.name, []).append(doc)
                print(f"round {rnd + 1}/{args.rounds} {size:>10} {v.name:<40} {doc['pods_per_second']:8.0f} pods/s",
                      file=sys.stderr, flush=True)
    results = {}
    for size in sizes:
        summaries = {name: summarize(rs) for name, rs in runs[size].items()}
        pods = int(size.split("x")[1])
        ratio = {f"wasmsched / kube-scheduler GOMAXPROCS={gp}":
                 summaries["wasmsched"]["pods_per_second"]["median"]
                 / summaries[f"kube-scheduler GOMAXPROCS={gp}"]["pods_per_second"]["median"] for gp in procs}
        results[size] = {"variants": summaries, "pods_per_second_ratio": ratio,
                         "nodenumber_ms_per_pod": nodenumber_cost(summaries, pods)}
        print_table(size, summaries)
        for k, r in ratio.items():
            print(f"  {k}: {r:.2f}x (target >= 1.5x)")
        for host, ms in results[size]["nodenumber_ms_per_pod"].items():
            target = " (target <= 1.0)" if host.startswith("wasmsched") else ""
            print(f"  NodeNumber adds on {host}: {ms['wall_ms']:.2f} ms/pod wall, "
                  f"{ms['cpu_ms']:.2f} ms/pod CPU{target}")
    for note in notes:
        print(f"note: {note}")
    load_after = load_avg()
    print(f"load average before/after: {load_before} / {load_after} (other work on the machine skews the numbers)")
    write_results(args.out, {"benchmark": "scheduler_perf SchedulingBasic", "rounds": args.rounds,
                             "wasmsched_metrics": not args.no_metrics,
                             "load_average": {"before": load_before, "after": load_after},
                             "notes": notes, "results": results})
    return 0


def build_kswe_host(kswe: Path) -> Path | None:
    """KSWE's host (bench/kswe_perf) built against the checkout; None (with the reason on stderr) if it cannot be."""
    try:
        return build_kswe_program("kswe-perf", ROOT / "bench" / "kswe_perf", kswe)
    except (RuntimeError, OSError) as e:
        print(f"KSWE host: {e}", file=sys.stderr)
        return None


if __name__ == "__main__":
    raise SystemExit(main())
