"""Soak: RSS and wasm instances over a long `simulate` run (issue 13: flat RSS, no instance leak).

Schedules a generated cluster (default 5000 nodes, 20,000 pods) in-process, as `simulate` does, with the
default profile plus the NodeNumber guest (examples/nodenumber, `make examples`) configured as in
examples/nodenumber/scheduler.yaml. Every --every pods it samples the process's RSS (/proc/self/status
VmRSS), Python's allocated blocks, the events the cluster holds and the guest's instance pool counters.

A scheduler's memory grows with the pods it has bound (its cache holds each one, the cluster records
each binding's event; kube-scheduler's does too), so RSS cannot stay level while pods are bound. The
same cluster is therefore also run with a baseline profile (QueueSort and Bind only, no guest) in its
own process: the guest and the default plugins' growth is the difference between the two runs' growth
over their second halves, per pod. Each run is a fresh process so that one's heap does not hide the
other's growth.

Verdict: per-pod growth over the second half beyond what the recorded events hold (simulate keeps them
for its report), this run's minus the baseline's, in KiB/pod; instances live <= maxInstances
throughout, none pinned (scheduling or binding) once the run is quiet, none discarded, none live after
close. Prints a table of samples and writes JSON.

    .venv/bin/python bench/soak.py [--nodes 5000] [--pods 20000] [--every 1000] [--out bench/results/soak.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "examples" / "nodenumber" / "scheduler.yaml"
BASELINE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"disabled": [{"name": "*"}],
                                   "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]}},
    }],
}
# Second-half growth per pod beyond the baseline's that counts as a leak: a few hundred bytes per pod is
# allocator noise at 10,000 pods (a few MiB); a leak of an instance, a store or a cycle's buffers is far more.
LEAK_KIB_PER_POD = 0.5


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("/proc/self/status has no VmRSS")


def wasm_plugins(sim: Any) -> list[Any]:
    """The profiles' wasm plugins: the plugins with instance counters (Simulation.wasm_counters' test)."""
    return [pl for fwk in sim.scheduler.profiles.values() for pl in fwk.plugins_map.values()
            if callable(getattr(pl, "counters", None))]


def instances(plugins: list[Any]) -> dict[str, int]:
    """Pool counters summed over the wasm plugins; pinned = held by a pod's scheduling or binding cycle."""
    out = {"created": 0, "discarded": 0, "live": 0, "idle": 0, "pinned": 0}
    for pl in plugins:
        c = pl.counters()
        for k in ("created", "discarded", "live", "idle"):
            out[k] += c.get(k, 0)
        out["pinned"] += c.get("scheduling", 0) + c.get("binding", 0)
    return out


def max_instances(plugins: list[Any]) -> int:
    from wasmsched.wasm.args import DEFAULT_MAX_INSTANCES

    return sum(getattr(getattr(pl, "pool", None), "max_instances", DEFAULT_MAX_INSTANCES) for pl in plugins)


def events_bytes(events: list[Any]) -> int:
    """What the cluster's recorded events hold: each object, its attribute dict and the strings it refers
    to, each string once (the reasons and actions are shared)."""
    seen: set[int] = set()
    total = 0
    for ev in events:
        for obj in (ev, getattr(ev, "__dict__", None), *vars(ev).values()):
            if obj is not None and id(obj) not in seen:
                seen.add(id(obj))
                total += sys.getsizeof(obj)
    return total


def run_one(kind: str, nodes: int, pods: int, every: int, progress: bool = False) -> dict[str, Any]:
    """One soak in this process; kind is "wasm" (default profile + NodeNumber) or "baseline"."""
    from wasmsched.config import config_from_dict, load_config
    from wasmsched.embedded.generate import generate
    from wasmsched.plugins.registry import in_tree_registry
    from wasmsched.simulator.simulation import Simulation

    registry = in_tree_registry()
    if kind == "wasm":
        from wasmsched.wasm.plugin import register_wasm_plugins

        cfg = load_config(str(CONFIG))
        register_wasm_plugins(registry, cfg, CONFIG.parent)
    else:
        cfg = config_from_dict(BASELINE)
    sim = Simulation(cfg, registry)
    sim.apply(generate(nodes, pods))
    plugins = wasm_plugins(sim)
    if kind == "wasm" and not plugins:
        raise SystemExit(f"{CONFIG}: no wasm plugin was built")
    samples: list[dict[str, Any]] = []
    start = time.perf_counter()

    def sample(attempts: int) -> None:
        samples.append({"attempts": attempts, "seconds": round(time.perf_counter() - start, 2),
                        "rss_mib": round(rss_kib() / 1024, 1), "py_blocks": sys.getallocatedblocks(),
                        "events": len(sim.cluster.events), **instances(plugins)})
        if progress:
            print(f"{kind}: {samples[-1]}", file=sys.stderr, flush=True)

    sample(0)
    attempts = 0
    s = sim.scheduler
    while s.schedule_one():
        attempts += 1
        if attempts % every == 0:
            sample(attempts)
    result = sim.run_until_quiet()  # anything left: bindings in flight, backoff (none expected)
    if attempts % every:
        sample(attempts)
    quiet = instances(plugins)
    ev_bytes = events_bytes(sim.cluster.events)
    s.close()
    closed = instances(plugins)
    return {"kind": kind, "nodes": nodes, "pods": pods, "scheduled": result.count("Scheduled"),
            "seconds": round(time.perf_counter() - start, 1), "max_instances": max_instances(plugins),
            "samples": samples, "instances_when_quiet": quiet,
            "bytes_per_event": round(ev_bytes / max(len(sim.cluster.events), 1)), "instances_after_close": closed}


def second_half_growth(run: dict[str, Any]) -> dict[str, float]:
    """RSS, Python blocks and events from the sample nearest half the attempts to the last sample."""
    samples = run["samples"]
    last = samples[-1]
    mid = min(samples, key=lambda s: abs(s["attempts"] - last["attempts"] / 2))
    pods = max(last["attempts"] - mid["attempts"], 1)
    rss = last["rss_mib"] - mid["rss_mib"]
    events_kib = (last["events"] - mid["events"]) * run["bytes_per_event"] / 1024
    return {"pods": pods, "rss_mib": round(rss, 1), "kib_per_pod": round(1024 * rss / pods, 3),
            # The growth the recorded events (kept for simulate's report, by design) do not explain.
            "kib_per_pod_beyond_events": round((1024 * rss - events_kib) / pods, 3),
            "py_blocks_per_pod": round((last["py_blocks"] - mid["py_blocks"]) / pods, 2),
            "events_per_pod": round((last["events"] - mid["events"]) / pods, 2)}


def verdict(wasm: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    gw, gb = second_half_growth(wasm), second_half_growth(base)
    extra = round(gw["kib_per_pod_beyond_events"] - gb["kib_per_pod_beyond_events"], 3)
    quiet, closed = wasm["instances_when_quiet"], wasm["instances_after_close"]
    peak_live = max(s["live"] for s in wasm["samples"])
    checks = {
        "rss_flat": extra <= LEAK_KIB_PER_POD,
        "live_within_max": peak_live <= wasm["max_instances"] and quiet["live"] <= wasm["max_instances"],
        "none_pinned_when_quiet": quiet["pinned"] == 0,
        "none_discarded": quiet["discarded"] == 0,
        "none_live_after_close": closed["live"] == 0,
        "all_scheduled": wasm["scheduled"] == wasm["pods"],
    }
    return {"growth_wasm": gw, "growth_baseline": gb, "extra_kib_per_pod": extra,
            "extra_mib_over_run": round(extra * wasm["pods"] / 1024, 1), "peak_live": peak_live,
            "checks": checks, "ok": all(checks.values())}


def print_samples(run: dict[str, Any]) -> None:
    print(f"\n{run['kind']}: {run['nodes']} nodes, {run['pods']} pods, {run['scheduled']} scheduled in "
          f"{run['seconds']} s (maxInstances {run['max_instances']})")
    print(f"{'attempts':>8} {'s':>7} {'RSS MiB':>8} {'py blocks':>10} {'events':>7} "
          f"{'created':>7} {'live':>5} {'idle':>5} {'pinned':>6} {'discarded':>9}")
    for s in run["samples"]:
        print(f"{s['attempts']:>8} {s['seconds']:>7.1f} {s['rss_mib']:>8.1f} {s['py_blocks']:>10} "
              f"{s['events']:>7} {s['created']:>7} {s['live']:>5} {s['idle']:>5} {s['pinned']:>6} "
              f"{s['discarded']:>9}")
    print(f"when quiet: {run['instances_when_quiet']}; after close: {run['instances_after_close']}")


def spawn(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--run", kind, "--nodes", str(args.nodes), "--pods", str(args.pods),
           "--every", str(args.every)] + (["--progress"] if args.progress else [])
    proc = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=20_000)
    ap.add_argument("--every", type=int, default=1000, help="sample every N scheduling attempts")
    ap.add_argument("--out", default="bench/results/soak.json")
    ap.add_argument("--progress", action="store_true", help="print each sample on stderr as it is taken")
    ap.add_argument("--run", choices=("wasm", "baseline"), help=argparse.SUPPRESS)  # one run, JSON on stdout
    args = ap.parse_args()
    if args.run:
        json.dump(run_one(args.run, args.nodes, args.pods, args.every, args.progress), sys.stdout)
        return 0
    if not (CONFIG.parent / "nodenumber.wasm").exists():
        print(f"{CONFIG.parent / 'nodenumber.wasm'} is missing: run `make examples` first", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    base = spawn("baseline", args)
    wasm = spawn("wasm", args)
    wall = time.perf_counter() - t0
    for run in (wasm, base):
        print_samples(run)
    v = verdict(wasm, base)
    gw, gb = v["growth_wasm"], v["growth_baseline"]
    print(f"\nsecond half ({gw['pods']} pods): RSS +{gw['rss_mib']} MiB ({gw['kib_per_pod']} KiB/pod, "
          f"{gw['py_blocks_per_pod']} Python blocks/pod, {gw['events_per_pod']} events/pod); baseline profile "
          f"+{gb['rss_mib']} MiB ({gb['kib_per_pod']} KiB/pod, {gb['py_blocks_per_pod']} blocks/pod, "
          f"{gb['events_per_pod']} events/pod)")
    print(f"beyond the recorded events ({wasm['bytes_per_event']} B each; baseline {base['bytes_per_event']} B): "
          f"{gw['kib_per_pod_beyond_events']} KiB/pod, baseline {gb['kib_per_pod_beyond_events']} KiB/pod")
    print(f"beyond the baseline: {v['extra_kib_per_pod']} KiB/pod ({v['extra_mib_over_run']} MiB over "
          f"{wasm['pods']} pods; a leak is > {LEAK_KIB_PER_POD} KiB/pod)")
    print(f"instances: peak live {v['peak_live']} of maxInstances {wasm['max_instances']}; when quiet "
          f"{wasm['instances_when_quiet']}; after close {wasm['instances_after_close']}")
    print("checks: " + ", ".join(f"{k} {'ok' if ok else 'FAILED'}" for k, ok in v["checks"].items()))
    print(f"verdict: {'OK' if v['ok'] else 'FAILED'} (both runs: {wall:.0f} s)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"python": platform.python_version(), "machine": platform.machine(),
                               "cpus": os.cpu_count(), "load_average": os.getloadavg(),
                               "seconds": round(wall, 1), "verdict": v, "wasm": wasm, "baseline": base},
                              indent=2) + "\n")
    print(f"wrote {out}")
    return 0 if v["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
