"""Throughput on a real API server: wasmsched and the stock kube-scheduler v1.37.2, one after the other,
against the same dev-cluster, on the same workload.

Starts a dev-cluster (etcd, kube-apiserver and KWOK built by `make kube`; the kube-scheduler binary by
`make kube-scheduler`), creates NODES KWOK nodes once, then for each scheduler: creates PODS pending pods
of 100m CPU / 500Mi in a fresh namespace (from 8 threads), starts the scheduler, and measures pods/s from
the first create to the last pod bound (seen through a watch). The schedulers run one at a time, each with
its own schedulerName, so each sees only its own pods; the pods of a finished run are deleted before the
next. Everything shares the machine: the API server, etcd, KWOK, the pod creator and the scheduler. Prints a
table (pods/s from the first create to the last binding; binds/s from the first binding to the last) and
writes JSON.

    make kube kube-scheduler examples/nodenumber/nodenumber.wasm
    .venv/bin/python bench/real_cluster.py [--nodes 500] [--pods 1000] [--rounds 1] \
        [--out bench/results/real_cluster.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from wasmsched.api.kinds import RESOURCES
from wasmsched.devcluster.binaries import bin_dir
from wasmsched.devcluster.cluster import DevCluster
from wasmsched.kube.api import ClientConnection, KubeApi, load_configuration
from wasmsched.kube.informer import Handler, Informer

ROOT = Path(__file__).resolve().parents[1]


def client_connection(qps: int) -> str:
    """kube's defaults (50 QPS, burst 100) unless --qps raises them (for both schedulers alike)."""
    return "" if qps <= 0 else f"  qps: {qps}\n  burst: {2 * qps}\n"


def config(path: Path, scheduler: str, wasm: Path | None, qps: int) -> Path:
    cc = client_connection(qps)
    text = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            + (f"clientConnection:\n{cc}" if cc else "") +
            "leaderElection:\n  leaderElect: false\n"
            f"profiles:\n- schedulerName: {scheduler}\n")
    if wasm is not None:
        text += ("  plugins:\n    multiPoint:\n      enabled:\n      - name: NodeNumber\n        weight: 10\n"
                 "  pluginConfig:\n  - name: NodeNumber\n    args:\n"
                 f"      guestURL: {wasm}\n      guestConfig: '{{\"reverse\": false}}'\n")
    path.write_text(text)
    return path


def kube_scheduler_config(path: Path, scheduler: str, kubeconfig: Path, qps: int) -> Path:
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    f"clientConnection:\n  kubeconfig: {kubeconfig}\n{client_connection(qps)}"
                    "leaderElection:\n  leaderElect: false\n"
                    f"profiles:\n- schedulerName: {scheduler}\n")
    return path


def pod(name: str, scheduler: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


class BoundWatcher:
    """Counts pods of a namespace that got a node, through an informer started before the first create (a
    plain watch would be closed by the API server when it falls behind; the informer re-watches)."""

    def __init__(self, api: KubeApi, namespace: str, want: int) -> None:
        self.namespace, self.want = namespace, want
        self.bound: set[str] = set()
        self.done = threading.Event()
        self.first_bound = 0.0
        self.last_bound = 0.0
        self.stop = threading.Event()
        self.informer = Informer(api, RESOURCES["Pod"])
        self.informer.add_handler(Handler(self._seen, lambda _old, new: self._seen(new), None))
        self.thread = threading.Thread(target=self.informer.run, args=(self.stop,), daemon=True)
        self.thread.start()
        self.informer.wait_for_sync(30)

    def _seen(self, pod: Any) -> None:
        if pod.metadata.namespace == self.namespace and pod.spec.nodeName and pod.metadata.name not in self.bound:
            self.bound.add(pod.metadata.name)
            self.last_bound = time.perf_counter()
            self.first_bound = self.first_bound or self.last_bound
            if len(self.bound) >= self.want:
                self.done.set()

    def close(self) -> None:
        self.stop.set()
        self.informer.stop_watch()


def run_one(cluster: DevCluster, api: KubeApi, label: str, argv: list[str], scheduler: str, pods: int,
            tmp: Path, cwd: Path = ROOT) -> dict[str, Any]:
    ns = f"bench-{scheduler}"
    api.request_json("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                           "metadata": {"name": ns}})
    watcher = BoundWatcher(api, ns, pods)
    log_path = tmp / f"{scheduler}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, cwd=cwd)
        try:
            time.sleep(3.0)  # start-up (imports, informer sync) is not what is measured
            start = time.perf_counter()
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda i: api.request("POST", f"/api/v1/namespaces/{ns}/pods",
                                                    body=pod(f"p{i:05d}", scheduler)), range(pods)))
            created = time.perf_counter()
            ok = watcher.done.wait(600)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    watcher.close()
    seconds = watcher.last_bound - start if ok else float("nan")
    api.request("DELETE", f"/api/v1/namespaces/{ns}/pods")  # deletecollection; KWOK removes them
    drain = watcher.last_bound - watcher.first_bound if ok else float("nan")
    return {"scheduler": label, "pods": pods, "bound": len(watcher.bound), "seconds": round(seconds, 3),
            "create_seconds": round(created - start, 3),
            "pods_per_second": round(len(watcher.bound) / seconds, 1) if ok else 0.0,
            # From the first binding to the last: the scheduler's own pace, less bounded by how fast the
            # pods are created.
            "bind_pods_per_second": round((len(watcher.bound) - 1) / drain, 1) if ok and drain > 0 else 0.0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=1, help="each scheduler this many times, interleaved")
    ap.add_argument("--baseline-repo", metavar="DIR", default="",
                    help="also run `wasmsched run` from this checkout (with its generated modules): a before/after")
    ap.add_argument("--qps", type=int, default=0,
                    help="the schedulers' clientConnection qps (burst twice that); default: kube's 50/100")
    ap.add_argument("--out", default=str(ROOT / "bench/results/real_cluster.json"))
    args = ap.parse_args()
    kube_scheduler = Path(os.environ.get("WASMSCHED_KUBE_BIN", "") or bin_dir()) / "kube-scheduler"
    wasm = ROOT / "examples/nodenumber/nodenumber.wasm"
    for need, how in ((kube_scheduler, "make kube-scheduler"), (wasm, "make examples/nodenumber/nodenumber.wasm")):
        if not need.exists():
            print(f"error: {need} is missing: run `{how}`", file=sys.stderr)
            return 2
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="wasmsched-bench-") as d:
        tmp = Path(d)
        cluster = DevCluster.up(tmp / "cluster")
        try:
            # The benchmark's own requests (creates, the watch) are not rate-limited.
            api = KubeApi(load_configuration(str(cluster.kubeconfig)), ClientConnection(qps=0))
            t0 = time.perf_counter()
            cluster.create_nodes(args.nodes, prefix="bench-node-", wait_ready=False)
            print(f"created {args.nodes} nodes in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
            py = [sys.executable, "-m", "wasmsched", "run", "--kubeconfig", str(cluster.kubeconfig),
                  "--secure-port", "0"]
            for r in range(args.rounds):
                runs: list[tuple[str, Any, Path]] = [
                    ("kube-scheduler v1.37.2", lambda s: [str(kube_scheduler), "--config",
                     str(kube_scheduler_config(tmp / f"{s}.yaml", s, cluster.kubeconfig, args.qps)),
                     "--secure-port", "0", "--v", "1"], ROOT),
                    ("wasmsched", lambda s: [*py, "--config", str(config(tmp / f"{s}.yaml", s, None, args.qps))],
                     ROOT),
                ]
                if args.baseline_repo:
                    # `python -m wasmsched` run from that checkout imports its own package first.
                    runs.append((f"wasmsched baseline ({Path(args.baseline_repo).name})",
                                 lambda s: [*py, "--config", str(config(tmp / f"{s}.yaml", s, None, args.qps))],
                                 Path(args.baseline_repo).resolve()))
                runs.append(("wasmsched + NodeNumber wasm",
                             lambda s: [*py, "--config", str(config(tmp / f"{s}.yaml", s, wasm, args.qps))], ROOT))
                for i, (label, argv, cwd) in enumerate(runs):
                    sched = f"s{r}x{i}"
                    row = run_one(cluster, api, label, argv(sched), sched, args.pods, tmp, cwd)
                    row["round"] = r
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr)
        finally:
            cluster.down()
    base = {row["round"]: row["pods_per_second"] for row in rows if row["scheduler"].startswith("kube-scheduler")}
    print(f"{'scheduler':<34} {'round':>5} {'pods':>6} {'bound':>6} {'create s':>8} {'seconds':>8} {'pods/s':>8} "
          f"{'vs kube':>8} {'binds/s':>8}")
    for row in rows:
        ratio = row["pods_per_second"] / base[row["round"]] if base.get(row["round"]) else float("nan")
        row["ratio_to_kube_scheduler"] = round(ratio, 2)
        print(f"{row['scheduler']:<34} {row['round']:>5} {row['pods']:>6} {row['bound']:>6} "
              f"{row['create_seconds']:>8.2f} {row['seconds']:>8.2f} {row['pods_per_second']:>8.1f} {ratio:>7.2f}x "
              f"{row['bind_pods_per_second']:>8.1f}")
    out = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
           "nodes": args.nodes, "pods": args.pods, "qps": args.qps or "kube default (50, burst 100)",
           "results": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
