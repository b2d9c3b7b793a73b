"""Start-up of `wasmsched simulate` (issue 13: <= 150 ms): a 1-node, 1-pod cluster, whole process.

Interleaved rounds of four commands, each a fresh process:
  interpreter  `python -c pass`: the floor every command pays (with site, the venv's .pth files);
  import cli   `python -c "import wasmsched.cli.main"`: imports only;
  simulate     `.venv/bin/wasmsched simulate cluster.yaml` (the console script, as a user runs it);
  + wasm       the same with examples/nodenumber/scheduler.yaml (the wasm host, compiling from the
               module cache), when examples/nodenumber/nodenumber.wasm is built.
Wall time (min and median) and CPU time (user+sys of the child, min). CPU time is less disturbed by
other processes on a shared machine than wall time; both are printed. Before measuring, one run of each
writes bytecode (__pycache__), so no round compiles Python sources (PYTHONDONTWRITEBYTECODE is unset
for the children). Writes JSON.

    .venv/bin/python bench/startup.py [--rounds 10] [--out bench/results/startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WASM_CONFIG = ROOT / "examples" / "nodenumber" / "scheduler.yaml"
TARGET_MS = 150.0

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: pod-1, namespace: default}
spec:
  containers:
  - name: c
    image: nginx
    resources:
      requests: {cpu: 100m, memory: 100Mi}
"""


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run; the command must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def summary(walls: list[float], cpus: list[float]) -> dict[str, float]:
    return {"wall_min_ms": round(1000 * min(walls), 1), "wall_median_ms": round(1000 * statistics.median(walls), 1),
            "cpu_min_ms": round(1000 * min(cpus), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--out", default="bench/results/startup.json")
    args = ap.parse_args()
    bindir = Path(sys.executable).parent
    wasmsched = bindir / "wasmsched"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Path(tmp) / "cluster.yaml"
        cluster.write_text(CLUSTER)
        commands: dict[str, list[str]] = {
            "interpreter": [sys.executable, "-c", "pass"],
            "import cli": [sys.executable, "-c", "import wasmsched.cli.main"],
            "simulate": [str(wasmsched), "simulate", str(cluster)],
        }
        if (WASM_CONFIG.parent / "nodenumber.wasm").exists():
            commands["+ wasm"] = [str(wasmsched), "simulate", "--config", str(WASM_CONFIG), str(cluster)]
        for cmd in commands.values():  # bytecode, the compiled-module cache
            timed(cmd, env)
        walls: dict[str, list[float]] = {k: [] for k in commands}
        cpus: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(args.rounds):
            for name, cmd in commands.items():
                w, c = timed(cmd, env)
                walls[name].append(w)
                cpus[name].append(c)
    rows = {name: summary(walls[name], cpus[name]) for name in commands}
    print(f"{'command':>12} {'wall min':>9} {'median':>8} {'cpu min':>8}   (ms, {args.rounds} rounds)")
    for name, r in rows.items():
        print(f"{name:>12} {r['wall_min_ms']:>9.1f} {r['wall_median_ms']:>8.1f} {r['cpu_min_ms']:>8.1f}")
    sim = rows["simulate"]["wall_min_ms"]
    print(f"simulate start-up (whole process, min): {sim:.1f} ms, target {TARGET_MS:.0f} ms: "
          f"{'met' if sim <= TARGET_MS else f'missed by {sim - TARGET_MS:.1f} ms'} "
          f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                              "cpus": os.cpu_count(), "load_average": os.getloadavg(), "rounds": args.rounds,
                              "target_ms": TARGET_MS, "results": rows}
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
