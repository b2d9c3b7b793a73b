"""Cost of the Go guest examples (examples/<name>, standard Go, sdk/go) on the wasm host.

Per example: the .wasm size; compiling it (cold, empty module cache) and loading it from the disk
cache; instantiating one more guest instance (Go runtime start-up, package inits, plugin.Set); and
one Score call through the host on a 1,000-node snapshot (after PreFilter and PreScore, as in a
cycle). The baseline in the same run is the minimal WAT guest of bench_wasm.py (one host import per
Score) and, for imagelocality, the in-tree Python ImageLocality plugin. Prints a table, writes JSON.

    make examples && .venv/bin/python bench/bench_go_guests.py [--nodes 1000] [--out bench/results/go_guests.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import wasmtime
import yaml

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeBatch, PreFilterPlugin, PreScorePlugin
from wasmsched.framework.snapshot import new_snapshot
from wasmsched.framework.status import is_skip, is_success
from wasmsched.plugins.imagelocality import ImageLocality
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.instance import GuestInstance
from wasmsched.wasm.plugin import WasmPlugin, new_wasm_plugin

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ["nodenumber", "imagelocality", "advanced"]
WAT_GUEST = ROOT / "examples" / "wasm" / "last-digit" / "last_digit.wat"


def cluster(nodes: int) -> tuple[FakeHandle, list[Any], Any]:
    """Nodes with two images each and team labels; the pod uses one of the images."""
    objs = []
    for i in range(nodes):
        w = make_node(f"node-{i}").label("example.com/team", ["a", "b"][i % 2])
        w.image(300 * 1024 * 1024, f"registry.example/app:{i % 7}")
        w.image(50 * 1024 * 1024, "registry.example/sidecar:1")
        objs.append(w.obj())
    snap = new_snapshot([], objs)
    pod = make_pod("web-7").label("team", "a").container("registry.example/app:3").obj()
    return FakeHandle(snapshot=snap), snap.list(), pod


def guest_args(example: str) -> dict[str, Any]:
    """The example's own pluginConfig args from its scheduler.yaml."""
    cfg = yaml.safe_load((ROOT / "examples" / example / "scheduler.yaml").read_text())
    for profile in cfg["profiles"]:
        for pc in profile.get("pluginConfig", []):
            if "guestURL" in pc.get("args", {}):
                return dict(pc["args"])
    raise SystemExit(f"examples/{example}/scheduler.yaml: no wasm pluginConfig")


def score_cost(plugin: Any, state: CycleState, pod: Any, infos: list[Any], rounds: int) -> float:
    """Microseconds per node of Score, through score_batch as the framework's runner calls it."""
    t0 = time.perf_counter()
    for _ in range(rounds):
        _, st = plugin.score_batch(state, pod, NodeBatch(infos))
        assert is_success(st), st
    return (time.perf_counter() - t0) / (rounds * len(infos)) * 1e6


def cycle_state(plugin: Any, pod: Any, infos: list[Any]) -> CycleState:
    state = CycleState()
    if isinstance(plugin, PreFilterPlugin):
        plugin.pre_filter(state, pod, infos)
    if isinstance(plugin, PreScorePlugin):
        st = plugin.pre_score(state, pod, infos)
        assert is_success(st) or is_skip(st), st
    return state


def instantiate_ms(plugin: WasmPlugin, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        inst = GuestInstance(plugin.compiled)
        times.append(time.perf_counter() - t0)
        inst.close()
    return statistics.median(times) * 1000


def measure(name: str, wasm: Path, args: dict[str, Any], nodes: int, rounds: int) -> dict[str, Any]:
    handle, infos, pod = cluster(nodes)
    raw = {**args, "guestURL": str(wasm)}
    cache = Path(tempfile.mkdtemp(prefix="wasmsched-bench-cache-"))
    t0 = time.perf_counter()
    new_wasm_plugin(name, raw, handle, runtime=Runtime(cache)).close()
    cold_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    plugin = new_wasm_plugin(name, raw, handle, runtime=Runtime(cache))
    cached_s = time.perf_counter() - t0
    inst_ms = instantiate_ms(plugin, 10)
    state = cycle_state(plugin, pod, infos)
    us = score_cost(plugin, state, pod, infos, rounds)
    plugin.close()
    return {"example": name, "wasm_bytes": wasm.stat().st_size, "compile_s": round(cold_s, 2),
            "load_cached_ms": round(cached_s * 1000, 1), "instantiate_ms": round(inst_ms, 2),
            "score_us_per_call": round(us, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default="bench/results/go_guests.json")
    args = ap.parse_args()
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="wasmsched-bench-"))
    wat = tmp / "score_last_digit.wasm"
    wat.write_bytes(wasmtime.wat2wasm(WAT_GUEST.read_text()))
    rows.append(measure("wat-baseline", wat, {}, args.nodes, args.rounds))
    for ex in EXAMPLES:
        wasm = ROOT / "examples" / ex / f"{ex}.wasm"
        if not wasm.exists():
            raise SystemExit(f"{wasm} is missing: run `make examples` first")
        rows.append(measure(ex, wasm, guest_args(ex), args.nodes, args.rounds))
    handle, infos, pod = cluster(args.nodes)
    in_tree = ImageLocality(handle)
    py_us = score_cost(in_tree, cycle_state(in_tree, pod, infos), pod, infos, args.rounds)
    print(f"{'guest':>14} {'wasm bytes':>11} {'compile s':>10} {'cached ms':>10} {'instantiate ms':>15} "
          f"{'Score us/call':>14}")
    for r in rows:
        print(f"{r['example']:>14} {r['wasm_bytes']:>11} {r['compile_s']:>10.2f} {r['load_cached_ms']:>10.1f} "
              f"{r['instantiate_ms']:>15.2f} {r['score_us_per_call']:>14.2f}")
    print(f"{'in-tree Python ImageLocality':>40} Score us/call {py_us:.2f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"python": platform.python_version(), "machine": platform.machine(),
                               "nodes": args.nodes, "guests": rows,
                               "in_tree_imagelocality_us_per_call": round(py_us, 2)}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
