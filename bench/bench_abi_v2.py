"""ABI v2's costs (docs/abi.md §14): InterPodAffinity as a wasm guest beside kube's in-tree plugin, and what a
change to the cluster costs a guest that reads the snapshot.

1. Per pod: `simulate` on N nodes with R running pods spread over them (labels app=a..j, zones z0..z9; every
   fifth with a required anti-affinity term, every fifth another with a preferred affinity term) schedules P
   pending pods of the same mix, three ways, in interleaved rounds: a baseline profile (PrioritySort,
   NodeResourcesFit, DefaultBinder), the baseline plus the in-tree InterPodAffinity, the baseline plus the
   guest (examples/interpodaffinity, in the same place, weight 2). A plugin's time per pod is its run's
   ms/pod minus the baseline's.
2. Per pod change: R pods are changed one at a time (bound to a node, then deleted), each followed by the
   scheduler's snapshot update, with no guest loaded and with the guest loaded and registered for pod events
   but idle (no pod pending: no cycle, no hint); then the cost of bringing an instance's mirror up to date
   after K changes (one PreFilter that reads the snapshot, minus the same PreFilter after no change), per
   changed pod.

    make examples && .venv/bin/python bench/bench_abi_v2.py [--nodes 500 --running 5000 --pods 1000] \
        [--rounds 3] [--out bench/results/abi_v2.json]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from benchlib import load_avg, write_results

from wasmsched.api.convert import message_to_dict
from wasmsched.api.gvr import GroupVersionResource
from wasmsched.api.types import Namespace, Pod
from wasmsched.config import config_from_dict
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.snapshot import Snapshot
from wasmsched.plugins.registry import Registry
from wasmsched.scheduler.cache import Cache
from wasmsched.simulator.simulation import Simulation
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle
from wasmsched.wasm.plugin import new_wasm_plugin

ROOT = Path(__file__).resolve().parent.parent
GUEST = ROOT / "examples" / "interpodaffinity" / "interpodaffinity.wasm"
GUEST_ARGS = {"guestURL": str(GUEST), "guestConfig": '{"hardPodAffinityWeight": 1}', "timeout": "30s",
              "watch": [{"group": "", "version": "v1", "resource": "namespaces"}]}
BASE = [{"name": "PrioritySort"}, {"name": "NodeResourcesFit"}, {"name": "DefaultBinder"}]


def profile(extra: str | None) -> dict[str, Any]:
    enabled = [*BASE, *([{"name": extra, "weight": 2}] if extra else [])]
    doc: dict[str, Any] = {"schedulerName": "default-scheduler",
                           "plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": enabled}}}
    if extra == "InterPodAffinityWasm":
        doc["pluginConfig"] = [{"name": extra, "args": GUEST_ARGS}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [doc]}


def nodes(n: int) -> list[Any]:
    return [make_node(f"node-{i}").label("topology.kubernetes.io/zone", f"z{i % 10}")
            .capacity(cpu="64", memory="256Gi", pods="250").obj() for i in range(n)]


def pod(name: str, i: int, node: str = "") -> Pod:
    """The mix: app label a..j; every fifth a required anti-affinity to its app per host, every fifth + 1 a
    preferred affinity to its app per zone."""
    app = "abcdefghij"[i % 10]
    w = make_pod(name).uid(name).label("app", app).req(cpu="10m", memory="16Mi")
    if i % 5 == 0:
        w.pod_anti_affinity("kubernetes.io/hostname", {"app": app})
    elif i % 5 == 1:
        w.preferred_pod_affinity(10, "topology.kubernetes.io/zone", {"app": app})
    if node:
        w.node(node)
    return w.obj()


def namespace() -> Namespace:
    ns = Namespace()
    ns.metadata.name = "default"
    return ns


def schedule(extra: str | None, n: int, running: int, pending: int) -> dict[str, float]:
    registry = Registry()
    if extra == "InterPodAffinityWasm":
        registry.register(extra, lambda a, h: new_wasm_plugin(extra, a, h))
    sim = Simulation(config_from_dict(profile(extra)), registry)
    sim.apply({"Namespace": [namespace()], "Node": nodes(n),
               "Pod": [pod(f"run-{i}", i, f"node-{i % n}") for i in range(running)]})
    sim.apply({"Pod": [pod(f"pend-{i}", i) for i in range(pending)]})
    start = time.perf_counter()
    result = sim.run_until_quiet()
    wall = time.perf_counter() - start
    sim.scheduler.close()
    scheduled = result.count("Scheduled")
    return {"scheduled": scheduled, "seconds": round(wall, 3), "ms_per_pod": round(1000 * wall / max(pending, 1), 3)}


def per_change(n: int, running: int, with_guest: bool) -> dict[str, float]:
    """Bind then delete `running` pods one at a time, a snapshot update after each change."""
    cache = Cache()
    for node in nodes(n):
        cache.add_node(node)
    snap = Snapshot()
    cache.update_snapshot(snap)
    handle = FakeHandle(snapshot=snap)
    guest = new_wasm_plugin("InterPodAffinityWasm", GUEST_ARGS, handle) if with_guest else None
    if guest is not None:
        guest.events_to_register()
    pods = [pod(f"p-{i}", i, f"node-{i % n}") for i in range(running)]
    start = time.perf_counter()
    for p in pods:
        cache.add_pod(p)
        cache.update_snapshot(snap)
    for p in pods:
        cache.remove_pod(p)
        cache.update_snapshot(snap)
    wall = time.perf_counter() - start
    if guest is not None:
        guest.close()
    return {"changes": 2 * running, "us_per_change": round(1e6 * wall / (2 * running), 3)}


def journal_append_ns(n: int) -> float:
    """What ABI v2 adds to a snapshot update for each changed node whether or not a guest ever reads it: one
    entry in the snapshot's journal (framework/snapshot.py)."""
    snap = Snapshot()
    names = [f"node-{i % n}" for i in range(100_000)]
    start = time.perf_counter_ns()
    for name in names:
        snap.record_changes((name,))
    return (time.perf_counter_ns() - start) / len(names)


def mirror_catch_up(n: int, running: int, changes: int) -> dict[str, float]:
    """A guest instance's PreFilter (which lists the snapshot) after `changes` pods were bound, minus the same
    PreFilter after none, per changed pod."""
    cache = Cache()
    for node in nodes(n):
        cache.add_node(node)
    for i in range(running):
        cache.add_pod(pod(f"run-{i}", i, f"node-{i % n}"))
    snap = Snapshot()
    cache.update_snapshot(snap)
    handle = FakeHandle(snapshot=snap)
    guest = new_wasm_plugin("InterPodAffinityWasm", GUEST_ARGS, handle)
    handle.watched.apply(GroupVersionResource("", "v1", "namespaces"), message_to_dict(namespace()))
    incoming = pod("incoming", 0)

    def prefilter() -> float:
        t = time.perf_counter()
        guest.pre_filter(CycleState(), incoming, snap.list())
        return time.perf_counter() - t

    prefilter()  # the first sync: every node and pod
    idle = statistics.median(prefilter() for _ in range(20))
    after = []
    k = 0
    for _ in range(5):
        for _ in range(changes):
            cache.add_pod(pod(f"new-{k}", k, f"node-{k % n}"))
            k += 1
        cache.update_snapshot(snap)
        after.append(prefilter())
    guest.close()
    extra = statistics.median(after) - idle
    return {"changes": changes, "prefilter_ms_no_change": round(1000 * idle, 3),
            "prefilter_ms_after_changes": round(1000 * statistics.median(after), 3),
            "us_per_changed_pod": round(1e6 * extra / changes, 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--running", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="bench/results/abi_v2.json")
    args = ap.parse_args()
    if not GUEST.exists():
        ap.error(f"{GUEST} is missing: run `make examples` first")
    runs: dict[str, list[dict[str, float]]] = {"baseline": [], "in-tree": [], "guest": []}
    for r in range(args.rounds):
        for name, extra in (("baseline", None), ("in-tree", "InterPodAffinity"), ("guest", "InterPodAffinityWasm")):
            runs[name].append(schedule(extra, args.nodes, args.running, args.pods))
            print(f"round {r + 1} {name}: {runs[name][-1]}", flush=True)
    med = {k: statistics.median(x["ms_per_pod"] for x in v) for k, v in runs.items()}
    plugin_ms = {"in-tree": med["in-tree"] - med["baseline"], "guest": med["guest"] - med["baseline"]}
    ratio = plugin_ms["guest"] / plugin_ms["in-tree"] if plugin_ms["in-tree"] > 0 else None
    change_runs: dict[str, list[float]] = {"no guest": [], "idle guest": []}
    for _ in range(args.rounds):
        for name in change_runs:
            change_runs[name].append(per_change(args.nodes, args.running, name == "idle guest")["us_per_change"])
    changes = {name: {"changes": 2 * args.running, "us_per_change": round(statistics.median(v), 3), "rounds": v}
               for name, v in change_runs.items()}
    catch_up = mirror_catch_up(args.nodes, args.running, 100)
    journal_ns = journal_append_ns(args.nodes)

    print(f"\nInterPodAffinity, {args.nodes} nodes, {args.running} running pods, {args.pods} pending; "
          f"median of {args.rounds} interleaved rounds")
    print(f"{'profile':>22} {'ms/pod':>8} {'plugin ms/pod':>14} {'scheduled':>9}")
    for name in runs:
        sched = runs[name][-1]["scheduled"]
        extra_ms = f"{plugin_ms[name]:.3f}" if name in plugin_ms else "-"
        print(f"{name:>22} {med[name]:8.3f} {extra_ms:>14} {sched:>9}")
    print(f"guest / in-tree plugin time: {ratio:.2f}x" if ratio is not None else "guest / in-tree: n/a")
    idle_cost = changes["idle guest"]["us_per_change"] - changes["no guest"]["us_per_change"]
    print(f"\nper pod change (bind or delete, then the snapshot update), {2 * args.running} changes, "
          f"median of {args.rounds} interleaved rounds")
    for name, row in changes.items():
        print(f"{name:>22} {row['us_per_change']:8.3f} us")
    print(f"{'idle guest adds':>22} {idle_cost:8.3f} us (the spread of the rounds: "
          f"{max(change_runs['no guest']) - min(change_runs['no guest']):.1f} us without a guest)")
    print(f"{'journal entry':>22} {journal_ns / 1000:8.3f} us (all ABI v2 adds to a change a guest never reads)")
    print(f"mirror catch-up after {catch_up['changes']} bound pods: {catch_up['us_per_changed_pod']:.2f} us per pod "
          f"(PreFilter {catch_up['prefilter_ms_no_change']:.2f} ms with no change, "
          f"{catch_up['prefilter_ms_after_changes']:.2f} ms after)")
    write_results(Path(args.out), {
        "benchmark": "abi_v2", "nodes": args.nodes, "running": args.running, "pods": args.pods,
        "rounds": runs, "median_ms_per_pod": med, "plugin_ms_per_pod": plugin_ms, "guest_over_in_tree": ratio,
        "per_change": changes, "idle_guest_us_per_change": idle_cost, "journal_entry_ns": journal_ns,
        "mirror_catch_up": catch_up,
        "load_avg": load_avg()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
