"""SchedulingBasic throughput with the columnar Filter/Score passes against the per-node forms.

kube-scheduler's scheduler_perf SchedulingBasic cluster (nodes 32 cpu / 256Gi / 110 pods, pods
100m / 500Mi, default profile), scheduled in-process by a Simulation twice per round: with the node
table's columnar passes (the default) and with them turned off (SchedulingAlgorithm.columnar = False,
the per-node batch forms), in interleaved rounds. Placements must be identical. Prints a table (min,
median, max pods/s and pods per CPU-second) and writes JSON.

    .venv/bin/python bench/bench_columnar.py [--sizes 500x1000,5000x1000] [--rounds 3]
        [--out bench/results/columnar.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from benchlib import scheduling_basic

from wasmsched.config import load_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import Simulation


def run(nodes: int, pods: int, columnar: bool) -> tuple[float, float, list[tuple[str, str | None]]]:
    """(pods/s, pods per CPU-second, placements) of scheduling every pod."""
    sim = Simulation(load_config(None), in_tree_registry())
    sim.scheduler.algorithm.columnar = columnar
    node_objs, pod_objs = scheduling_basic(nodes, pods)
    sim.apply({"Node": node_objs, "Pod": pod_objs})
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = sim.run_until_quiet()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    sim.scheduler.close()
    scheduled = result.count("Scheduled")
    if scheduled != pods:
        raise SystemExit(f"{nodes}x{pods}: only {scheduled} pods scheduled")
    return scheduled / wall, scheduled / cpu, [(p.name, p.node) for p in result.pods]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="500x1000,5000x1000", help="NODESxPODS,...")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="bench/results/columnar.json")
    args = ap.parse_args()
    rows = []
    for size in args.sizes.split(","):
        n, p = (int(x) for x in size.split("x"))
        samples: dict[str, dict[str, list[float]]] = {m: {"wall": [], "cpu": []} for m in ("per-node", "columnar")}
        placements: dict[str, Any] = {}
        for _ in range(args.rounds):
            for mode in ("per-node", "columnar"):
                wall, cpu, placed = run(n, p, mode == "columnar")
                samples[mode]["wall"].append(wall)
                samples[mode]["cpu"].append(cpu)
                placements.setdefault(mode, placed)
        if placements["per-node"] != placements["columnar"]:
            raise SystemExit(f"{size}: the columnar passes placed pods differently")
        for mode, s in samples.items():
            rows.append({"size": size, "mode": mode, "rounds": args.rounds,
                         **{f"{k}_{stat}": round(fn(v), 1) for k, v in s.items()
                            for stat, fn in (("min", min), ("median", statistics.median), ("max", max))}})
    print(f"{'cluster':>10} {'mode':>9} {'pods/s min':>10} {'median':>8} {'max':>8} {'pods/cpu-s median':>17}")
    for r in rows:
        print(f"{r['size']:>10} {r['mode']:>9} {r['wall_min']:>10.1f} {r['wall_median']:>8.1f} {r['wall_max']:>8.1f}"
              f" {r['cpu_median']:>17.1f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"python": platform.python_version(), "machine": platform.machine(),
                               "results": rows}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
