"""Cost of the wasm host: one export call through the host, and a wasm Score plugin in `simulate`.

Part 1 calls `score` on a WAT guest (one host import per call) through the plugin, for N nodes,
and compares it with an in-process Python score function doing the same work (the baseline).
Part 2 schedules synthetic clusters with the default profile (baseline) and the default profile
plus the same guest enabled as a wasm Score/Filter plugin. Prints tables and writes JSON.

    .venv/bin/python bench/bench_wasm.py [--sizes 100x500,500x1000] [--out bench/results/wasm.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import wasmtime

from wasmsched.config import config_from_dict, load_config
from wasmsched.embedded.generate import generate
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeBatch
from wasmsched.framework.snapshot import new_snapshot
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator.simulation import Simulation
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle
from wasmsched.wasm.plugin import new_wasm_plugin, register_wasm_plugins

GUEST = Path(__file__).resolve().parent.parent / "examples" / "wasm" / "last-digit" / "last_digit.wat"


def build_guest(tmp: Path) -> Path:
    path = tmp / "score_last_digit.wasm"
    path.write_bytes(wasmtime.wat2wasm(GUEST.read_text()))
    return path


def python_score(name: str) -> int:
    c = name[-1:]
    return 10 * int(c) if c.isdigit() else 0


def call_cost(wasm: Path, nodes: int, rounds: int) -> dict[str, Any]:
    infos = new_snapshot([], [make_node(f"node-{i}").obj() for i in range(nodes)]).list()
    handle = FakeHandle(snapshot=new_snapshot([], [ni.node for ni in infos]))
    t0 = time.perf_counter()
    plugin = new_wasm_plugin("LastDigit", {"guestURL": str(wasm)}, handle)
    load_s = time.perf_counter() - t0
    pod = make_pod("p-1").obj()
    state = CycleState()
    plugin.pre_filter(state, pod, infos)
    t0 = time.perf_counter()
    for _ in range(rounds):
        _, st = plugin.score_batch(state, pod, NodeBatch(infos))
        assert st is None
    wasm_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(rounds):
        [python_score(ni.name) for ni in infos]
    py_s = time.perf_counter() - t0
    plugin.close()
    calls = rounds * nodes
    return {"nodes": nodes, "calls": calls, "load_ms": round(load_s * 1000, 2),
            "wasm_us_per_call": round(wasm_s / calls * 1e6, 2), "python_us_per_call": round(py_s / calls * 1e6, 3)}


def sim(nodes: int, pods: int, wasm: Path | None) -> dict[str, Any]:
    if wasm is None:
        cfg = load_config(None)
    else:
        cfg = config_from_dict({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"multiPoint": {"enabled": [{"name": "LastDigit", "weight": 1}]}},
                          "pluginConfig": [{"name": "LastDigit", "args": {"guestURL": str(wasm)}}]}],
        })
    registry = in_tree_registry()
    register_wasm_plugins(registry, cfg)
    s = Simulation(cfg, registry)
    s.apply(generate(nodes, pods))
    t0 = time.perf_counter()
    result = s.run_until_quiet()
    wall = time.perf_counter() - t0
    s.scheduler.close()
    scheduled = result.count("Scheduled")
    return {"nodes": nodes, "pods": pods, "scheduled": scheduled, "seconds": round(wall, 4),
            "ms_per_pod": round(1000 * wall / max(scheduled, 1), 3), "wasm": result.extra_summary.get("wasm", {})}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100x500,500x1000", help="NODESxPODS,...")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--out", default="bench/results/wasm.json")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wasmsched-bench-"))
    wasm = build_guest(tmp)
    cost = call_cost(wasm, 1000, args.rounds)
    print(f"{'nodes':>6} {'calls':>7} {'load ms':>8} {'wasm us/call':>13} {'python us/call':>15}")
    print(f"{cost['nodes']:>6} {cost['calls']:>7} {cost['load_ms']:>8.2f} {cost['wasm_us_per_call']:>13.2f} "
          f"{cost['python_us_per_call']:>15.3f}")
    rows = []
    for size in args.sizes.split(","):
        n, p = (int(x) for x in size.split("x"))
        base, with_wasm = sim(n, p, None), sim(n, p, wasm)
        rows.append({"size": size, "default_profile": base, "default_plus_wasm": with_wasm,
                     "wasm_cost_ms_per_pod": round(with_wasm["ms_per_pod"] - base["ms_per_pod"], 3)})
    print()
    print(f"{'cluster':>10} {'profile':>18} {'scheduled':>9} {'seconds':>8} {'ms/pod':>7}")
    for r in rows:
        for name in ("default_profile", "default_plus_wasm"):
            d = r[name]
            print(f"{r['size']:>10} {name:>18} {d['scheduled']:>9} {d['seconds']:>8.3f} {d['ms_per_pod']:>7.3f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"python": platform.python_version(), "machine": platform.machine(),
                               "call_cost": cost, "simulate": rows}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
