"""Start-up of `wasmsched simulate`: the whole process on a 1-node, 1-pod cluster.

Each round runs `.venv/bin/wasmsched simulate DIR` (wall time from spawn to exit, peak RSS of the child),
and, as the baseline in the same run, the bare interpreter (`python -c pass`), interleaved. Then, once:

- phases in one process (imports of the CLI, config and registry, the Simulation, applying the objects,
  scheduling, the report), measured with perf_counter from the first line of a child script;
- `python -X importtime`: the imports with the largest cumulative time (direct imports of the
  entry point, and the heaviest modules by their own time).

Prints a table and writes JSON. Issue 13's target: `simulate` start-up (imports, config, first pod
enqueued) <= 150 ms.

    .venv/bin/python bench/startup.py [--rounds 10] [--out bench/results/startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import load_avg, write_results  # noqa: E402  (bench/ is not a package)

TARGET_MS = 150

CLUSTER = """\
apiVersion: v1
kind: Node
metadata:
  name: node-0
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: pod-0
  namespace: default
spec:
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.10.2
    resources:
      requests: {cpu: 100m, memory: 500Mi}
"""

# Run in a child: the same calls as `wasmsched simulate DIR`, timed phase by phase.
PHASES = """\
import time, sys
t0 = time.perf_counter()
marks = []
def mark(name):
    marks.append((name, time.perf_counter()))
from wasmsched.cli import main as cli_main  # the entry point's imports
mark("import wasmsched.cli")
from wasmsched.api.manifest import load_paths
from wasmsched.config import load_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import Simulation
from wasmsched.wasm.plugin import register_wasm_plugins
mark("import (simulate's remaining modules)")
cfg = load_config(None)
registry = in_tree_registry()
register_wasm_plugins(registry, cfg)
mark("config + registry")
sim = Simulation(cfg, registry)
mark("Simulation (scheduler, framework, plugins)")
loaded = load_paths([sys.argv[1]])
mark("read manifests")
sim.apply(loaded.by_kind)
mark("apply objects (first pod enqueued)")
result = sim.run_until_quiet()
mark("schedule")
sim.scheduler.close()
from wasmsched.cli.simulate import _report
import io
_report(result, "table", False, io.StringIO())
mark("report")
prev = t0
out = []
for name, t in marks:
    out.append([name, (t - prev) * 1000])
    prev = t
import json
print(json.dumps({"phases": out, "total_ms": (prev - t0) * 1000}))
"""


# What a user's process does: read (and, the first time, write) bytecode caches. An inherited
# PYTHONDONTWRITEBYTECODE would make every round compile every module.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed_child(argv: list[str]) -> tuple[float, float]:
    """Wall seconds from spawn to exit, and the child's peak RSS in MB (its own rusage, from wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=CHILD_ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{err[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def stats(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def importtime(python: str, entry: str, cluster: Path, top: int, runs: int) -> dict[str, Any]:
    """`-X importtime` of the whole command, `runs` times, each module's minimum over them (one run on a
    busy machine is mostly noise): the heaviest imports by cumulative and by own time."""
    best: dict[str, dict[str, Any]] = {}
    for _ in range(runs):
        proc = subprocess.run([python, "-X", "importtime", entry, "simulate", str(cluster)],
                              capture_output=True, text=True, check=True, env=CHILD_ENV)
        for line in proc.stderr.splitlines():
            if not line.startswith("import time:") or "[us]" in line:
                continue
            self_us, cum_us, name = line.removeprefix("import time:").split("|", 2)
            depth = (len(name) - len(name.lstrip())) // 2
            row = best.setdefault(name.strip(), {"module": name.strip(), "depth": depth,
                                                 "self_ms": float("inf"), "cumulative_ms": float("inf")})
            row["self_ms"] = min(row["self_ms"], int(self_us) / 1000)
            row["cumulative_ms"] = min(row["cumulative_ms"], int(cum_us) / 1000)
    rows = list(best.values())
    # Depth 0 is what the interpreter's start-up and the entry point import; 1 what those import.
    top_level = sorted((r for r in rows if r["depth"] <= 1), key=lambda r: -float(r["cumulative_ms"]))[:top]
    by_self = sorted(rows, key=lambda r: -float(r["self_ms"]))[:top]
    return {"runs": runs, "total_ms": sum(r["self_ms"] for r in rows), "modules": len(rows),
            "top_cumulative": top_level, "top_self": by_self}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--top", type=int, default=12, help="import-time rows to show")
    ap.add_argument("--importtime-runs", type=int, default=3, help="-X importtime runs (each module's minimum)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "startup.json")
    args = ap.parse_args(argv)
    venv_bin = Path(sys.executable).parent
    entry = venv_bin / "wasmsched"
    if not entry.exists():
        raise SystemExit(f"{entry} not found: run `make setup` and this script with .venv/bin/python")
    python = sys.executable
    load_before = load_avg()
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Path(tmp) / "cluster"
        cluster.mkdir()
        (cluster / "cluster.yaml").write_text(CLUSTER)
        timed_child([str(entry), "simulate", str(cluster)])  # warm the page cache and .pyc files
        sim_wall, sim_rss, base_wall, base_rss = [], [], [], []
        for _ in range(args.rounds):
            w, r = timed_child([python, "-c", "pass"])
            base_wall.append(w)
            base_rss.append(r)
            w, r = timed_child([str(entry), "simulate", str(cluster)])
            sim_wall.append(w)
            sim_rss.append(r)
        phases = json.loads(subprocess.run([python, "-c", PHASES, str(cluster)], capture_output=True, text=True,
                                           check=True, env=CHILD_ENV).stdout.splitlines()[-1])
        imports = importtime(python, str(entry), cluster, args.top, args.importtime_runs)
    load_after = load_avg()

    sim = {k: v * 1000 for k, v in stats(sim_wall).items()}
    base = {k: v * 1000 for k, v in stats(base_wall).items()}
    print(f"{'process':<40} {'min ms':>8} {'median ms':>10} {'max ms':>8} {'peak RSS MB':>12}")
    print(f"{'python -c pass (baseline)':<40} {base['min']:>8.0f} {base['median']:>10.0f} {base['max']:>8.0f} "
          f"{max(base_rss):>12.0f}")
    print(f"{'wasmsched simulate (1 node, 1 pod)':<40} {sim['min']:>8.0f} {sim['median']:>10.0f} {sim['max']:>8.0f} "
          f"{max(sim_rss):>12.0f}")
    print(f"  minus the interpreter: {sim['min'] - base['min']:.0f} ms (min); target {TARGET_MS} ms for "
          f"imports, config and the first pod enqueued")
    print(f"\nphases in one process ({phases['total_ms']:.0f} ms from the first line):")
    for name, ms in phases["phases"]:
        print(f"  {name:<45} {ms:>7.1f} ms")
    print(f"\n-X importtime (min of {imports['runs']} runs): {imports['modules']} modules, "
          f"{imports['total_ms']:.0f} ms; top by cumulative:")
    for r in imports["top_cumulative"]:
        print(f"  {r['module']:<45} {r['cumulative_ms']:>7.1f} ms (self {r['self_ms']:.1f})")
    print("top by own time:")
    for r in imports["top_self"]:
        print(f"  {r['module']:<45} {r['self_ms']:>7.1f} ms")
    print(f"load average before/after: {load_before} / {load_after} (other work on the machine skews the numbers)")
    write_results(args.out, {
        "benchmark": "startup", "rounds": args.rounds, "target_ms": TARGET_MS,
        "load_average": {"before": load_before, "after": load_after},
        "simulate_ms": sim, "simulate_peak_rss_mb": max(sim_rss),
        "baseline_python_ms": base, "baseline_peak_rss_mb": max(base_rss),
        "simulate_minus_baseline_ms": {"min": sim["min"] - base["min"], "median": sim["median"] - base["median"]},
        "phases_ms": phases, "importtime": imports,
        "raw_ms": {"simulate": [w * 1000 for w in sim_wall], "baseline": [w * 1000 for w in base_wall]},
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
