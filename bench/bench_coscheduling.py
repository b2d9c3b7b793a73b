"""Gang scheduling with the Coscheduling wasm guest (examples/coscheduling): what it costs to sort the queue
by a guest, and what gangs cost on a real API server.

    make kube examples/coscheduling/coscheduling.wasm
    .venv/bin/python bench/bench_coscheduling.py --part sort --pods 10000
    .venv/bin/python bench/bench_coscheduling.py --part cluster --nodes 500 --gangs 200 --size 8 --rounds 2

--part sort (in-process, no cluster): PODS pods of PODS/8 gangs enter a scheduling queue and are popped,
with three QueueSort plugins: the in-tree PrioritySort (its key), the Coscheduling guest through the host's
keys (docs/abi.md §15.2: one guest call per pod entering the queue), and, as the design the keys avoid, the
guest asked per comparison: the count of `Less` calls kube's heap makes for the same pushes and pops,
measured by counting them (the time is the count times the guest's measured cost per call). Reports
guest calls, the queue's time per pod and the total.

--part cluster (a dev-cluster: etcd, kube-apiserver, kube-controller-manager and KWOK from `make kube`, in
a temporary directory, with the PodGroup CRD of examples/coscheduling/dev-cluster): NODES KWOK nodes (32 CPU, 256Gi,
110 pods); per round, interleaved and rotated, two runs of `wasmsched run` on the same workload, each with
its own schedulerName and namespace: without a gang plugin (the baseline), and with the Coscheduling guest
(queueSort and multiPoint, sharedInstance, PodGroups watched). The workload: GANGS PodGroups of minMember
SIZE, then their pods (100m CPU, 500Mi; SIZE per gang, labelled with the group) created gang after gang
from 8 threads, with the scheduler already running. Reported per run: pods/s from the first create to the
last binding, binds/s from the first binding to the last, and per gang the time from its last member's
create (completed) to its last member's binding (seen by a watch): p50, p99, max; and for the guest, the
gangs seen partly bound at the end (must be 0). Table on stdout, JSON to --out
(default bench/results/coscheduling_<part>.json).
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import platform
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from real_cluster import (  # noqa: E402  (bench/ is not a package)
    CREATORS,
    PodWatcher,
    SchedulerProcess,
    create_nodes,
    log,
)
from real_cluster_lib import quantile  # noqa: E402

from wasmsched.devcluster.cluster import DevCluster  # noqa: E402
from wasmsched.devcluster.processes import free_port  # noqa: E402
from wasmsched.kube.api import ApiError, ClientConnection, KubeApi, TransportError, load_configuration  # noqa: E402

GUEST = ROOT / "examples" / "coscheduling" / "coscheduling.wasm"
CRD = ROOT / "examples" / "coscheduling" / "dev-cluster" / "podgroup-crd.yaml"
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1"
BASELINE = "wasmsched run, no gang plugin"
GANG = "wasmsched run + Coscheduling wasm"


def coscheduling_args(guest_config: str = "{}") -> dict[str, Any]:
    return {"guestURL": str(GUEST), "sharedInstance": True, "guestConfig": guest_config,
            "watch": [{"group": "scheduling.x-k8s.io", "version": "v1alpha1", "resource": "podgroups"}]}


# ----- --part sort -------------------------------------------------------------------------------------

def part_sort(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from wasmsched.api.types import Pod
    from wasmsched.framework.types import PodInfo, QueuedPodInfo
    from wasmsched.plugins.prioritysort import PrioritySort
    from wasmsched.testing.builders import make_pod
    from wasmsched.testing.fake_handle import FakeHandle
    from wasmsched.wasm.plugin import new_wasm_plugin

    n, gang = args.pods, 8
    handle = FakeHandle()
    plugin = new_wasm_plugin("Coscheduling", coscheduling_args(), handle)  # type: ignore[arg-type]
    pods: list[Pod] = [make_pod(f"p{i:05d}", "bench").uid(f"u{i}").label(GROUP_LABEL, f"g{(i * 7919) % (n // gang)}")
                       .priority((i % 3) * 10).obj() for i in range(n)]
    qpis = [QueuedPodInfo(PodInfo(p), timestamp=float(i), initial_attempt_timestamp=float(i))
            for i, p in enumerate(pods)]

    def drain(key: Any) -> float:
        """Pushes every pod (the key taken at the push, as the queue does) and pops them all: seconds."""
        t = time.perf_counter()
        heap: list[tuple[Any, int]] = []
        for i, q in enumerate(qpis):
            heapq.heappush(heap, (key(q), i))
        while heap:
            heapq.heappop(heap)
        return time.perf_counter() - t

    prio = PrioritySort()
    rows = []
    t_prio = drain(prio.sort_key)
    rows.append({"queue sort": "PrioritySort (in-tree, key)", "guest calls": 0, "seconds": t_prio})
    before = plugin.counters()
    t_guest = drain(plugin.sort_key)  # type: ignore[attr-defined]
    rows.append({"queue sort": "Coscheduling guest, a key per pod (§15.2)", "guest calls": n, "seconds": t_guest})

    # What a guest call per comparison would cost: the comparisons kube's heap makes for the same pushes and pops.
    comparisons = 0

    class Counted:
        __slots__ = ("k",)

        def __init__(self, k: Any) -> None:
            self.k = k

        def __lt__(self, other: Counted) -> bool:
            nonlocal comparisons
            comparisons += 1
            return bool(self.k < other.k)

    keys = [prio.sort_key(q) for q in qpis]
    heap2: list[tuple[Counted, int]] = []
    for i, k in enumerate(keys):
        heapq.heappush(heap2, (Counted(k), i))
    while heap2:
        heapq.heappop(heap2)
    per_call = t_guest / n
    rows.append({"queue sort": "a guest call per Less (not built: counted)", "guest calls": comparisons,
                 "seconds": comparisons * per_call})
    for r in rows:
        r["us per pod"] = r["seconds"] / n * 1e6
    print(f"# {n} pods in {n // gang} gangs of {gang}: pushed into a queue, then popped; {os.cpu_count()} CPUs")
    print(f"{'queue sort':48} {'guest calls':>12} {'seconds':>9} {'us/pod':>9}")
    for r in rows:
        print(f"{r['queue sort']:48} {r['guest calls']:>12} {r['seconds']:>9.3f} {r['us per pod']:>9.1f}")
    plugin.close()
    return rows, {"pods": n, "gang_size": gang, "instances_created": plugin.counters()["created"] - before["created"]}


# ----- --part cluster ----------------------------------------------------------------------------------

def scheduler_config(path: Path, name: str, gang: bool, qps: int) -> Path:
    import yaml

    profile: dict[str, Any] = {"schedulerName": name}
    if gang:
        profile["plugins"] = {"queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                              "multiPoint": {"enabled": [{"name": "Coscheduling"}]}}
        profile["pluginConfig"] = [{"name": "Coscheduling", "args": coscheduling_args()}]
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "clientConnection": {"qps": qps, "burst": 2 * qps}, "leaderElection": {"leaderElect": False},
           "profiles": [profile]}
    path.write_text(yaml.safe_dump(cfg))
    return path


def install_crd(api: KubeApi) -> None:
    import yaml

    api.request_json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                     body=yaml.safe_load(CRD.read_text()))
    deadline = time.monotonic() + 60
    while True:
        try:
            api.request_json("GET", f"{PODGROUPS}/podgroups")
            return
        except ApiError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def run_one(api: KubeApi, label: str, name: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    ns = f"gang-{name}"
    api.request_json("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                           "metadata": {"name": ns}})
    n_pods = args.gangs * args.size
    watcher = PodWatcher(api, ns, 60)
    for g in range(args.gangs):
        api.request_json("POST", f"{PODGROUPS}/namespaces/{ns}/podgroups", body={
            "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": f"g{g:03d}"},
            "spec": {"minMember": args.size}})
    port = free_port()
    argv = [sys.executable, "-m", "wasmsched", "run", "--kubeconfig", str(args.kubeconfig), "--secure-port",
            str(port), "--bind-address", "127.0.0.1", "--cert-dir", str(tmp / f"certs-{name}"),
            "--config", str(scheduler_config(tmp / f"{name}.yaml", name, label == GANG, args.qps))]
    proc = SchedulerProcess(argv, ROOT, tmp / f"{name}.log", port)
    created: dict[str, float] = {}
    lock = threading.Lock()
    errors = 0

    def create(i: int) -> None:
        nonlocal errors
        g, m = divmod(i, args.size)
        pod_name = f"g{g:03d}-{m}"
        pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": pod_name, "labels": {GROUP_LABEL: f"g{g:03d}"}},
               "spec": {"schedulerName": name, "terminationGracePeriodSeconds": 0,
                        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                        "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}
        try:
            api.request("POST", f"/api/v1/namespaces/{ns}/pods", body=pod)
        except (ApiError, TransportError) as e:
            with lock:
                errors += 1
            log(f"create {ns}/{pod_name} failed: {e}")
            return
        t = time.perf_counter()
        with lock:
            created[pod_name] = t

    try:
        ready = proc.wait_ready(180)
        if ready is None:
            raise RuntimeError(f"{label}: /readyz did not answer in 180 s (see {proc.log_path})")
        t0 = time.perf_counter()
        with ThreadPoolExecutor(CREATORS) as pool:
            list(pool.map(create, range(n_pods)))
        create_s = time.perf_counter() - t0
        complete = watcher.wait(f"{len(created)} pods bound", lambda w: len(w.bound) >= len(created),
                                120 + n_pods / 5, proc.alive)
    finally:
        proc.stop()
    with watcher._cond:
        bound = dict(watcher.bound)
    times = sorted(t for _, t in bound.values())
    per_gang = []
    partial = 0
    for g in range(args.gangs):
        members = [f"g{g:03d}-{m}" for m in range(args.size)]
        got = [bound[m][1] for m in members if m in bound]
        if got and len(got) < args.size:
            partial += 1
        if len(got) == args.size and all(m in created for m in members):
            per_gang.append(max(got) - max(created[m] for m in members))
    row = {
        "scheduler": label, "scheduler_name": name, "complete": bool(complete) and len(bound) == n_pods,
        "pods": n_pods, "created": len(created), "create_errors": errors, "bound": len(bound),
        "create_seconds": round(create_s, 3),
        "pods_per_second": round(len(bound) / (times[-1] - t0), 1) if times else math.nan,
        "bind_pods_per_second": round((len(bound) - 1) / (times[-1] - times[0]), 1) if len(times) > 1 else math.nan,
        "gang_p50_seconds": round(quantile(per_gang, 0.5), 3) if per_gang else math.nan,
        "gang_p99_seconds": round(quantile(per_gang, 0.99), 3) if per_gang else math.nan,
        "gang_max_seconds": round(max(per_gang), 3) if per_gang else math.nan,
        "gangs_partly_bound": partial, "log": str(proc.log_path),
    }
    # Clean up: the next run starts from the same cluster.
    try:
        api.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0}, timeout=(10.0, 120.0))
    except (ApiError, TransportError) as e:
        log(f"deleting the pods of {ns}: {e}")
    watcher.wait("the pods to be deleted", lambda w: not w.present, 120)
    watcher.close()
    return row


def part_cluster(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="wasmsched-bench-") as d:
        tmp = Path(d)
        cluster = DevCluster.up(tmp / "cluster", die_with_parent=True)
        args.kubeconfig = cluster.kubeconfig
        try:
            api = KubeApi(load_configuration(str(cluster.kubeconfig)), ClientConnection(qps=0))
            install_crd(api)
            create_nodes(api, cluster, args.nodes)
            runs = [BASELINE, GANG]
            for r in range(args.rounds):
                order = runs[r % 2:] + runs[:r % 2]
                for i, label in enumerate(order):
                    name = f"r{r}x{i}"
                    log(f"round {r}: {label}")
                    row = run_one(api, label, name, args, tmp)
                    row["round"] = r
                    rows.append(row)
                    log(json.dumps(row))
            api.close()
        finally:
            cluster.down()
    print(f"# {args.nodes} nodes, {args.gangs} gangs of {args.size} pods, qps {args.qps}, {args.rounds} round(s), "
          f"{os.cpu_count()} CPUs")
    cols = ["scheduler", "round", "bound", "pods_per_second", "bind_pods_per_second", "gang_p50_seconds",
            "gang_p99_seconds", "gang_max_seconds", "gangs_partly_bound"]
    print(" | ".join(cols))
    for row in rows:
        print(" | ".join(str(row[c]) for c in cols))
    for label in (BASELINE, GANG):
        mine = [row for row in rows if row["scheduler"] == label]
        medians = {c: quantile([row[c] for row in mine], 0.5) for c in cols[3:8]}
        print(f"median {label}: " + ", ".join(f"{k} {v:.3f}" for k, v in medians.items()))
    return rows, {"nodes": args.nodes, "gangs": args.gangs, "size": args.size, "qps": args.qps, "rounds": args.rounds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=("sort", "cluster"), required=True)
    ap.add_argument("--pods", type=int, default=10000, help="sort: pods in the queue")
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--gangs", type=int, default=200)
    ap.add_argument("--size", type=int, default=8, help="pods per gang (the PodGroup's minMember)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--qps", type=int, default=1000)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if not GUEST.exists():
        print(f"error: {GUEST} is missing: run `make examples/coscheduling/coscheduling.wasm`", file=sys.stderr)
        return 2
    rows, sizes = part_sort(args) if args.part == "sort" else part_cluster(args)
    out = Path(args.out or ROOT / f"bench/results/coscheduling_{args.part}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
                               "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "part": args.part, **sizes,
                               "results": rows}, indent=1, default=str) + "\n")
    log(f"wrote {out}")
    return 0 if all(r.get("complete", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
