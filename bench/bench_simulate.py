"""Scheduling throughput of `simulate` on synthetic clusters.

Runs each cluster size twice in the same process: with the default profile, and with a baseline
profile that has only QueueSort and Bind (the framework's own overhead: queue, cache, snapshot,
binding cycle). Prints a table and writes JSON.

    .venv/bin/python bench/bench_simulate.py [--sizes 100x500,500x2000] [--out bench/results/simulate.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from wasmsched.config import config_from_dict, load_config
from wasmsched.embedded.generate import generate
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import Simulation

BASELINE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"disabled": [{"name": "*"}],
                                   "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]}},
    }],
}


def run(nodes: int, pods: int, baseline: bool) -> dict[str, float]:
    cfg = config_from_dict(BASELINE) if baseline else load_config(None)
    sim = Simulation(cfg, in_tree_registry())
    sim.apply(generate(nodes, pods))
    start = time.perf_counter()
    result = sim.run_until_quiet()
    wall = time.perf_counter() - start
    sim.scheduler.close()
    scheduled = result.count("Scheduled")
    return {"nodes": nodes, "pods": pods, "scheduled": scheduled, "seconds": round(wall, 4),
            "pods_per_second": round(scheduled / wall, 1) if wall else 0.0,
            "ms_per_pod": round(1000 * wall / max(scheduled, 1), 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100x500,500x2000,1000x2000", help="NODESxPODS,...")
    ap.add_argument("--out", default="bench/results/simulate.json")
    args = ap.parse_args()
    rows = []
    for size in args.sizes.split(","):
        n, p = (int(x) for x in size.split("x"))
        base = run(n, p, baseline=True)
        full = run(n, p, baseline=False)
        rows.append({"size": size, "baseline": base, "default_profile": full,
                     "plugin_cost_ms_per_pod": round(full["ms_per_pod"] - base["ms_per_pod"], 3)})
    print(f"{'cluster':>12} {'profile':>16} {'scheduled':>9} {'seconds':>8} {'pods/s':>8} {'ms/pod':>7}")
    for r in rows:
        for name in ("baseline", "default_profile"):
            d = r[name]
            print(f"{r['size']:>12} {name:>16} {d['scheduled']:>9} {d['seconds']:>8.3f} "
                  f"{d['pods_per_second']:>8.1f} {d['ms_per_pod']:>7.3f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"python": platform.python_version(), "machine": platform.machine(),
                               "results": rows}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
