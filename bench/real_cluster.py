"""wasmsched and the stock kube-scheduler v1.37.2 on a real API server: throughput, CPU and latency,
one scheduler after the other, against the same dev-cluster, on the same workload.

    make kube kube-scheduler examples/nodenumber/nodenumber.wasm
    .venv/bin/python bench/real_cluster.py --mode backlog --nodes 500 --pods 2000 --qps 1000 --rounds 2
    .venv/bin/python bench/real_cluster.py --mode latency --nodes 500 --rate 100 --duration 60 --qps 1000 --rounds 2
    .venv/bin/python bench/real_cluster.py --mode steady --nodes 500 --pods 1000 --rounds 1

Starts a dev-cluster (etcd, kube-apiserver, kube-controller-manager and KWOK built by `make kube`; the
kube-scheduler binary by `make kube-scheduler`) in a temporary directory, creates NODES KWOK nodes (32 CPU,
256Gi, 110 pods; from 8 threads) and waits until KWOK has made them Ready. Then, for R rounds, interleaved
and rotated (round 0: kube-scheduler, wasmsched, wasmsched + NodeNumber; round 1: wasmsched, wasmsched +
NodeNumber, kube-scheduler; ...: a run late in a round meets a cluster that has served more writes, so with
as many rounds as schedulers each takes every position once), each scheduler runs once: with its own
schedulerName (s<round>x<i>) and namespace (bench-s<round>x<i>), on pods of 100m CPU / 500Mi that name it,
so it sees only its own pods. The three schedulers are `kube-scheduler` v1.37.2,
`wasmsched run`, and `wasmsched run` with the NodeNumber wasm guest (examples/nodenumber) as a multiPoint
plugin; `--baseline-repo DIR` adds `wasmsched run` and `wasmsched run` + NodeNumber (its own guest build) from
another checkout (a before/after), `--jemalloc` adds
`wasmsched run` on jemalloc, preloaded and set up as deploy/Containerfile does (the image's allocator against
glibc's). Every scheduler
gets the same clientConnection: kube's default qps 50 / burst 100, or `--qps Q` (burst 2Q), and serves its
secure port on a free 127.0.0.1 port (kube-scheduler with the admin kubeconfig for delegated
authentication and authorization, so the admin's bearer token may GET /metrics). When a run is over its
pods and events are deleted and the benchmark waits until the pods are gone, so every run starts from the
same cluster.

Modes (--mode):
  backlog  PODS pending pods are created (8 threads) and seen by the benchmark's watch before the scheduler
           starts; binds/s is measured from the first binding to the last, as the watch sees them.
  steady   the scheduler starts, its /readyz answers, then PODS pods are created as fast as 8 threads can
           (the behaviour before --mode existed, which slept 3 s instead of asking /readyz): pods/s from the
           first create to the last binding is the creator's pace as much as the scheduler's; binds/s from
           the first binding to the last.
  latency  the scheduler starts, its /readyz answers, then RATE pods/s are created for DURATION seconds
           (RATE*DURATION pods; --pods is not used) on a fixed schedule (pod i at t0 + i/RATE, from 8
           threads, so the creator does not drift); reported: p50/p99 of kube's
           scheduler_pod_scheduling_sli_duration_seconds, scraped from the scheduler's own /metrics once every
           pod is bound (Prometheus' histogram_quantile: linear within the bucket), and p50/p99 of
           creation-to-bound seen by the watch (from the completion of the pod's create request, measured by
           the benchmark, to the watch event carrying its nodeName). Also the API server's own p50/p99 for the
           scheduler's bindings (`api bind`: apiserver_request_duration_seconds of POST pods/binding, from a
           scrape of its /metrics before the scheduler starts and one after the last binding), so that a
           binding's round trip splits into the server's time and the client's.

CPU (user + system, all threads, from /proc/PID/stat, 10 ms ticks) is the same for every scheduler:
  cpu s        the scheduler's CPU between the first binding and the last one, read when the watch sees
               them: start-up (imports, informer sync) and shutdown are excluded; cpu ms/pod is that over
               (bound - 1), the pods bound in that window, as binds/s is.
  start cpu s  the CPU it had used when the watch saw its first binding (start-up and the first pod).
  cpu_total_seconds (JSON) the whole process, from wait4's rusage after it exited on SIGTERM.

Per run also: pods bound (must equal pods created; the pods never bound are named in the JSON, and a pod
seen bound to a second node counts in `rebound`), the scheduler's scheduler_schedule_attempts_total by
result, the number of `Scheduled` events (events.k8s.io/v1) in the namespace once they settle (polled
while the scheduler still runs, until there are as many as pods bound or the count stayed the same for
3 s, at most 10 s + pods/qps), and the `Event dropped` lines in the scheduler's log (wasmsched's event
queue overflowing; the target is 0).

Prints one row per (scheduler, round) and a summary per scheduler (the median over rounds, and the ratio
of that median to kube-scheduler's: binds/s, CPU per pod, SLI p99) on stdout, progress on stderr, and
writes JSON (--out, default bench/results/real_cluster_<mode>.json: rows, summary, machine, sizes, qps).
Everything shares the machine: the API server, etcd, KWOK, the benchmark's creator and watch, and the
scheduler; run it on a quiet one. Every wait is bounded, scaled to NODES and PODS (it also runs at
--nodes 5000 --pods 10000); a scheduler that does not bind every pod in time is stopped and its row
marked incomplete (and the exit status is 1).

kube-scheduler exits with status 1 on SIGTERM when it runs without leader election (its Run returns
"finished without leader elect"); exit_code in the JSON is only informative.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import ctypes.util
import json
import math
import os
import platform
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")
sys.path.insert(0, str(ROOT / "bench"))

from real_cluster_lib import (  # noqa: E402  (bench/ is not a package; its helpers are found through sys.path)
    count_lines,
    histogram_buckets,
    histogram_increase,
    histogram_quantile,
    process_cpu_seconds,
    quantile,
    sample_sum,
    summarize,
)

from wasmsched.api.kinds import RESOURCES  # noqa: E402
from wasmsched.devcluster.binaries import KUBE_VERSION, bin_dir  # noqa: E402
from wasmsched.devcluster.cluster import DevCluster  # noqa: E402
from wasmsched.devcluster.nodes import kwok_node, node_ready  # noqa: E402
from wasmsched.devcluster.processes import free_port  # noqa: E402
from wasmsched.kube.api import ApiError, ClientConnection, KubeApi, TransportError, load_configuration  # noqa: E402
from wasmsched.kube.informer import Handler, Informer  # noqa: E402

KUBE = f"kube-scheduler {KUBE_VERSION}"
WASMSCHED = "wasmsched"
NODENUMBER = "wasmsched + NodeNumber wasm"
JEMALLOC = "wasmsched on jemalloc"
# deploy/Containerfile's MALLOC_CONF.
IMAGE_MALLOC_CONF = "background_thread:true,narenas:2"
SLI = "scheduler_pod_scheduling_sli_duration_seconds"
ATTEMPTS = "scheduler_schedule_attempts_total"
# The API server's own time per request (from its /metrics), for the scheduler's bindings.
APISERVER_DURATION = "apiserver_request_duration_seconds"
BINDING = {"verb": "POST", "resource": "pods", "subresource": "binding"}
DROPPED = "Event dropped"
CREATORS = 8  # threads creating pods (and nodes)
NODENUMBER_WASM = "examples/nodenumber/nodenumber.wasm"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ----- the schedulers' configuration ------------------------------------------------------------------

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


def jemalloc_argv() -> list[str]:
    """The prefix that runs a command on jemalloc, preloaded and set up as deploy/Containerfile does. env(1)
    execs the command in its own process, so the pid whose CPU and RSS are read is the command's."""
    lib = ctypes.util.find_library("jemalloc")
    if lib is None:
        raise SystemExit("error: --jemalloc: libjemalloc.so.2 not found (make allocator)")
    return ["env", f"LD_PRELOAD={lib}", f"MALLOC_CONF={IMAGE_MALLOC_CONF}"]


@dataclass
class Scheduler:
    label: str
    # (schedulerName, secure port) -> argv
    argv: Callable[[str, int], list[str]]
    cwd: Path


def schedulers(args: argparse.Namespace, kube_scheduler: Path, wasm: Path, kubeconfig: Path,
               tmp: Path) -> list[Scheduler]:
    def serving(s: str, port: int) -> list[str]:
        return ["--secure-port", str(port), "--bind-address", "127.0.0.1", "--cert-dir", str(tmp / f"certs-{s}")]

    def ks(s: str, port: int) -> list[str]:
        # Delegated authentication and authorization through the admin kubeconfig: without them
        # kube-scheduler cannot review a bearer token and /metrics is refused to everyone.
        return [str(kube_scheduler), "--config", str(kube_scheduler_config(tmp / f"{s}.yaml", s, kubeconfig, args.qps)),
                *serving(s, port), "--authentication-kubeconfig", str(kubeconfig),
                "--authorization-kubeconfig", str(kubeconfig), "--v", "1"]

    def ws(guest: Path | None) -> Callable[[str, int], list[str]]:
        return lambda s, port: [sys.executable, "-m", "wasmsched", "run", "--kubeconfig", str(kubeconfig),
                                *serving(s, port), "--config", str(config(tmp / f"{s}.yaml", s, guest, args.qps))]

    out = [Scheduler(KUBE, ks, ROOT), Scheduler(WASMSCHED, ws(None), ROOT)]
    base = Path(args.baseline_repo).resolve() if args.baseline_repo else None
    if base is not None:
        # `python -m wasmsched` run from that checkout imports its own package first.
        out.append(Scheduler(f"wasmsched baseline ({base.name})", ws(None), base))
    if args.jemalloc:
        on_jemalloc = jemalloc_argv()
        out.append(Scheduler(JEMALLOC, lambda s, port: [*on_jemalloc, *ws(None)(s, port)], ROOT))
    out.append(Scheduler(NODENUMBER, ws(wasm), ROOT))
    if base is not None:
        # The guest as that checkout builds it (its SDK), on that checkout's host.
        out.append(Scheduler(f"{NODENUMBER} baseline ({base.name})", ws(base / NODENUMBER_WASM), base))
    return out


# ----- the workload -----------------------------------------------------------------------------------

def pod(name: str, scheduler: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


def pod_name(i: int) -> str:
    return f"p{i:05d}"


class Creator:
    """Creates pods p00000.. in a namespace from CREATORS threads; `done[name]` is when its create request
    completed (perf_counter). A failed create is counted and logged, not retried."""

    def __init__(self, api: KubeApi, namespace: str, scheduler: str) -> None:
        self.api, self.namespace, self.scheduler = api, namespace, scheduler
        self.done: dict[str, float] = {}
        self.errors = 0
        self.max_lag = 0.0  # latency mode: how far behind its schedule a create started, at worst
        self._lock = threading.Lock()

    def _create(self, i: int) -> None:
        name = pod_name(i)
        try:
            self.api.request("POST", f"/api/v1/namespaces/{self.namespace}/pods", body=pod(name, self.scheduler))
        except (ApiError, TransportError) as e:
            with self._lock:
                self.errors += 1
            log(f"create {self.namespace}/{name} failed: {e}")
            return
        t = time.perf_counter()
        with self._lock:
            self.done[name] = t

    def all_now(self, n: int) -> None:
        with ThreadPoolExecutor(CREATORS) as pool:
            list(pool.map(self._create, range(n)))

    def paced(self, n: int, rate: float) -> None:
        """Pod i at t0 + i/rate; thread k creates pods k, k+CREATORS, ...; a thread behind its schedule
        does not sleep until it has caught up."""
        t0 = time.perf_counter() + 0.2

        def worker(k: int) -> None:
            lag = 0.0
            for i in range(k, n, CREATORS):
                due = t0 + i / rate
                now = time.perf_counter()
                if due > now:
                    time.sleep(due - now)
                else:
                    lag = max(lag, now - due)
                self._create(i)
            with self._lock:
                self.max_lag = max(self.max_lag, lag)

        threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(CREATORS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


class PodWatcher:
    """The pods of one namespace through an informer (field selector metadata.namespace; it re-watches
    when the API server closes a watch that fell behind): which were created, which got a node and when
    the watch saw it, which are still there. With `pid` set, reads the scheduler's CPU at the first
    binding and at every later one."""

    def __init__(self, api: KubeApi, namespace: str, sync_timeout: float) -> None:
        self.namespace = namespace
        self.created: set[str] = set()
        self.present: set[str] = set()
        self.bound: dict[str, tuple[str, float]] = {}  # name: (node, when seen)
        self.rebound: list[str] = []
        self.pid: int | None = None
        self.cpu_first: float | None = None
        self.cpu_last: float | None = None
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self.informer = Informer(api, RESOURCES["Pod"], field_selector=f"metadata.namespace={namespace}")
        self.informer.add_handler(Handler(self._seen, lambda _old, new: self._seen(new), self._gone))
        self.thread = threading.Thread(target=self.informer.run, args=(self._stop,), daemon=True,
                                       name=f"watch-{namespace}")
        self.thread.start()
        if not self.informer.wait_for_sync(sync_timeout):
            raise TimeoutError(f"the pod informer of {namespace} did not sync in {sync_timeout:.0f} s")

    def _seen(self, p: Any) -> None:
        name = p.metadata.name
        now = time.perf_counter()
        with self._cond:
            self.created.add(name)
            self.present.add(name)
            node = p.spec.nodeName
            if node:
                old = self.bound.get(name)
                if old is None:
                    self.bound[name] = (node, now)
                    if self.pid is not None:
                        cpu = process_cpu_seconds(self.pid)
                        if self.cpu_first is None:
                            self.cpu_first = cpu
                        self.cpu_last = cpu if cpu is not None else self.cpu_last
                elif old[0] != node:
                    self.rebound.append(name)
            self._cond.notify_all()

    def _gone(self, p: Any) -> None:
        with self._cond:
            self.present.discard(p.metadata.name)
            self._cond.notify_all()

    def wait(self, what: str, pred: Callable[[PodWatcher], bool], timeout: float,
             alive: Callable[[], bool] = lambda: True) -> bool:
        """Waits until pred(self) (checked under the lock), the timeout passes or alive() turns False."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not pred(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    log(f"{self.namespace}: timed out after {timeout:.0f} s waiting for {what}")
                    return False
                if not alive():
                    log(f"{self.namespace}: the scheduler exited while waiting for {what}")
                    return False
                self._cond.wait(min(left, 0.5))
        return True

    def bind_times(self) -> list[float]:
        with self._cond:
            return sorted(t for _, t in self.bound.values())

    def close(self) -> None:
        self._stop.set()
        self.informer.stop_watch()
        self.thread.join(5)


# ----- the scheduler process --------------------------------------------------------------------------

def _die_with_parent() -> None:
    # In the child between fork and exec: SIGTERM when the benchmark's main thread dies, however it dies.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


def _unverified() -> ssl.SSLContext:
    # The schedulers' self-signed serving certificates, on loopback.
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    return ctx


def apiserver_metrics(cluster: DevCluster, token: str) -> str:
    """The API server's /metrics (empty, with a line on stderr, when it does not answer 200)."""
    status, body = https_get(f"{cluster.server}/metrics", token, timeout=30.0)
    if status != 200:
        log(f"GET {cluster.server}/metrics: {status} {body[:200]}")
        return ""
    return body


def https_get(url: str, token: str = "", timeout: float = 10.0) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout,
                                    context=_unverified()) as resp:
            return int(resp.status), resp.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as e:
        return 0, str(e)


class SchedulerProcess:
    def __init__(self, argv: list[str], cwd: Path, log_path: Path, port: int) -> None:
        self.port = port
        self.log_path = log_path
        self.started = time.perf_counter()
        with open(log_path, "wb") as f:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=f,
                                         cwd=cwd, preexec_fn=_die_with_parent)  # noqa: PLW1509
        self.cpu_total: float | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.returncode is None and self.proc.poll() is None

    def wait_ready(self, timeout: float) -> float | None:
        """Seconds from the start to /readyz answering 200 (None: not in time, or it exited)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.alive():
            status, _ = https_get(f"https://127.0.0.1:{self.port}/readyz", timeout=2.0)
            if status == 200:
                return time.perf_counter() - self.started
            time.sleep(0.2)
        return None

    def metrics(self, token: str) -> str:
        status, body = https_get(f"https://127.0.0.1:{self.port}/metrics", token)
        if status != 200:
            log(f"GET /metrics on :{self.port}: {status} {body[:200]}")
            return ""
        return body

    def stop(self, grace: float = 30.0) -> None:
        """SIGTERM, SIGKILL after `grace` seconds; the whole process's CPU from wait4's rusage."""
        if self.proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while True:
            try:
                pid, status, usage = os.wait4(self.pid, 0 if time.monotonic() >= deadline else os.WNOHANG)
            except ChildProcessError:  # reaped meanwhile by poll()
                self.proc.returncode = self.proc.returncode if self.proc.returncode is not None else -1
                return
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_total = usage.ru_utime + usage.ru_stime
                return
            if time.monotonic() >= deadline - 0.1:
                log(f"scheduler {self.pid} still runs {grace:.0f} s after SIGTERM: SIGKILL")
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                deadline = time.monotonic()
            time.sleep(0.1)


# ----- one run ----------------------------------------------------------------------------------------

@dataclass
class Limits:
    """Every wait's bound, scaled to the cluster's size and the workload."""

    nodes: int
    pods: int
    duration: float

    @property
    def sync(self) -> float:
        return 30 + self.pods / 200

    @property
    def created(self) -> float:
        return 60 + self.pods / 20

    @property
    def ready(self) -> float:
        return 120 + self.pods / 50 + self.nodes / 100

    @property
    def bound(self) -> float:
        return 120 + self.duration + self.pods / 5

    @property
    def deleted(self) -> float:
        return 60 + self.pods / 20


def scheduled_events(api: KubeApi, namespace: str) -> int:
    """Events (events.k8s.io/v1) of the namespace with reason Scheduled, each regarding pod once."""
    names: set[str] = set()
    cont = ""
    while True:
        page = api.request_json("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
                                query={"limit": 500, "continue": cont})
        for ev in page.get("items") or []:
            if ev.get("reason") == "Scheduled":
                names.add((ev.get("regarding") or {}).get("name", ""))
        cont = (page.get("metadata") or {}).get("continue") or ""
        if not cont:
            return len(names)


def settle_events(api: KubeApi, namespace: str, want: int, limit: float) -> int:
    """The Scheduled events once as many as `want` are there, or their count stayed the same for 3 s,
    or `limit` seconds passed."""
    deadline = time.monotonic() + limit
    last, same_since = -1, time.monotonic()
    while True:
        try:
            n = scheduled_events(api, namespace)
        except (ApiError, TransportError) as e:
            log(f"listing the events of {namespace}: {e}")
            n = last
        now = time.monotonic()
        if n != last:
            last, same_since = n, now
        if n >= want or now - same_since >= 3 or now >= deadline:
            return max(n, 0)
        time.sleep(1.0)


def run_one(api: KubeApi, cluster: DevCluster, sched: Scheduler, name: str, args: argparse.Namespace,
            pods: int, tmp: Path) -> dict[str, Any]:
    mode = args.mode
    lim = Limits(args.nodes, pods, args.duration if mode == "latency" else 0.0)
    ns = f"bench-{name}"
    api.request_json("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                           "metadata": {"name": ns}})
    watcher = PodWatcher(api, ns, lim.sync)
    creator = Creator(api, ns, name)
    row: dict[str, Any] = {"scheduler": sched.label, "scheduler_name": name, "namespace": ns, "mode": mode}
    create_seconds = math.nan
    first_create = math.nan
    if mode == "backlog":
        t = time.perf_counter()
        creator.all_now(pods)
        create_seconds = time.perf_counter() - t
        want = len(creator.done)
        watcher.wait("the pods to be seen", lambda w: len(w.created) >= want, lim.created)
        log(f"{ns}: {want} pods created in {create_seconds:.1f} s and seen; starting {sched.label}")
    # Only this scheduler binds while it runs: the API server's binding latency between these two scrapes is
    # the server's time for its bindings (the rest of a binding's round trip is the client's, or unmeasured).
    api_bind_before = histogram_buckets(apiserver_metrics(cluster, args.admin_token), APISERVER_DURATION, **BINDING)
    port = free_port()
    log_path = tmp / f"{name}.log"
    proc = SchedulerProcess(sched.argv(name, port), sched.cwd, log_path, port)
    watcher.pid = proc.pid
    text = ""
    events = 0
    api_bind: list[tuple[float, float]] = []
    try:
        ready = proc.wait_ready(lim.ready)
        cpu_ready = process_cpu_seconds(proc.pid)
        if ready is None:
            log(f"{sched.label}: /readyz did not answer 200 in {lim.ready:.0f} s (see {log_path})")
        else:
            log(f"{sched.label} ready after {ready:.1f} s")
        if mode == "steady" and ready is not None:
            first_create = time.perf_counter()
            creator.all_now(pods)
            create_seconds = time.perf_counter() - first_create
        elif mode == "latency" and ready is not None:
            first_create = time.perf_counter()
            creator.paced(pods, args.rate)
            create_seconds = time.perf_counter() - first_create
            log(f"{ns}: {len(creator.done)} pods created in {create_seconds:.1f} s "
                f"(at worst {creator.max_lag * 1000:.0f} ms behind schedule)")
        want = len(creator.done)
        complete = ready is not None and watcher.wait(
            f"{want} pods bound", lambda w: len(w.bound) >= want, lim.bound, proc.alive)
        if proc.alive():
            # The SLI is observed after the binding call returns: wait (briefly) until every pod is in it.
            deadline = time.monotonic() + 10
            while True:
                text = proc.metrics(args.admin_token)
                if not complete or not text or time.monotonic() > deadline or \
                        (histogram_buckets(text, SLI) or [(0.0, 0.0)])[-1][1] >= len(watcher.bound):
                    break
                time.sleep(0.5)
            events = settle_events(api, ns, len(watcher.bound), 10 + pods / (args.qps or 50))
        api_bind = histogram_increase(api_bind_before, histogram_buckets(
            apiserver_metrics(cluster, args.admin_token), APISERVER_DURATION, **BINDING))
    finally:
        proc.stop()
        watcher.pid = None
    dropped = count_lines(log_path.read_text(errors="replace"), DROPPED)

    # ----- the row -----
    times = watcher.bind_times()
    bound = len(watcher.bound)
    first, last = (times[0], times[-1]) if times else (math.nan, math.nan)
    drain = last - first
    cpu = (watcher.cpu_last - watcher.cpu_first) if watcher.cpu_first is not None and \
        watcher.cpu_last is not None else math.nan
    buckets = histogram_buckets(text, SLI)
    lat = [max(0.0, watcher.bound[n][1] - t) for n, t in creator.done.items() if n in watcher.bound]
    never = sorted(set(creator.done) - set(watcher.bound))
    row.update({
        "complete": bool(complete) and bound == want and not watcher.rebound,
        "pods": pods, "created": want, "create_errors": creator.errors, "bound": bound,
        "never_bound": len(never), "never_bound_names": never[:20], "rebound": len(watcher.rebound),
        "ready_seconds": round(ready, 3) if ready is not None else None,
        "first_bind_seconds": round(first - proc.started, 3) if times else None,
        "create_seconds": round(create_seconds, 3),
        # From the first create to the last binding (steady and latency): the creator's pace as much as the
        # scheduler's.
        "seconds": round(last - first_create, 3) if mode != "backlog" and times else round(drain, 3),
        "pods_per_second": round(bound / (last - first_create), 1) if mode != "backlog" and times else math.nan,
        # From the first binding to the last: the scheduler's own pace.
        "bind_seconds": round(drain, 3),
        "bind_pods_per_second": round((bound - 1) / drain, 1) if bound > 1 and drain > 0 else math.nan,
        "cpu_seconds": round(cpu, 3),
        "cpu_ms_per_pod": round(cpu * 1000 / (bound - 1), 3) if bound > 1 else math.nan,
        "cpu_ready_seconds": round(cpu_ready, 3) if cpu_ready is not None else None,
        "cpu_startup_seconds": round(watcher.cpu_first, 3) if watcher.cpu_first is not None else None,
        "cpu_total_seconds": round(proc.cpu_total, 3) if proc.cpu_total is not None else None,
        "exit_code": proc.proc.returncode,
        "sli_count": buckets[-1][1] if buckets else 0,
        "sli_p50_seconds": histogram_quantile(0.5, buckets),
        "sli_p99_seconds": histogram_quantile(0.99, buckets),
        "attempts": {r: sample_sum(text, ATTEMPTS, result=r) for r in ("scheduled", "unschedulable", "error")},
        "watch_p50_seconds": quantile(lat, 0.5) if mode != "backlog" else math.nan,
        "watch_p99_seconds": quantile(lat, 0.99) if mode != "backlog" else math.nan,
        "api_bind_p50_seconds": histogram_quantile(0.5, api_bind),
        "api_bind_p99_seconds": histogram_quantile(0.99, api_bind),
        "scheduled_events": events,
        "events_dropped": dropped,
        "create_max_lag_seconds": round(creator.max_lag, 3),
        "log": str(log_path),
    })
    if never:
        log(f"{ns}: {len(never)} pods never bound, e.g. {never[:5]}")
    if watcher.rebound:
        log(f"{ns}: pods seen bound to a second node: {watcher.rebound[:5]}")

    # ----- clean up: the next run starts from the same cluster -----
    # deletecollection (KWOK removes the pods); the API server ends one that outlasts its request timeout
    # (10,000 pods) part way, so it is asked again until none is left.
    deadline = time.monotonic() + lim.deleted
    delete_pods(api, ns, deadline)
    watcher.wait("the pods to be deleted", lambda w: not w.present, max(deadline - time.monotonic(), 30.0))
    watcher.close()
    try:  # the scheduler is gone: nothing writes them any more
        api.request("DELETE", f"/apis/events.k8s.io/v1/namespaces/{ns}/events")
    except (ApiError, TransportError) as e:
        log(f"deleting the events of {ns}: {e}")
    return row


# ----- the cluster ------------------------------------------------------------------------------------

def create_nodes(api: KubeApi, cluster: DevCluster, n: int) -> None:
    """NODES KWOK nodes from CREATORS threads; then waits until KWOK has made every one Ready."""
    bodies = [kwok_node(f"bench-node-{i}") for i in range(n)]
    t = time.perf_counter()
    with ThreadPoolExecutor(CREATORS) as pool:
        list(pool.map(lambda b: api.request("POST", "/api/v1/nodes", body=b), bodies))
    log(f"created {n} nodes in {time.perf_counter() - t:.1f} s")
    deadline = time.monotonic() + 60 + n / 25
    while True:
        items = api.request_json("GET", "/api/v1/nodes")["items"]
        ready = sum(1 for node in items if node_ready(node))
        if ready >= n:
            log(f"{n} nodes Ready after {time.perf_counter() - t:.1f} s")
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {ready} of {n} nodes Ready after {60 + n / 25:.0f} s (is KWOK running?)")
        time.sleep(1.0)


# ----- the report -------------------------------------------------------------------------------------

def _f(v: Any, spec: str, width: int) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-".rjust(width)
    return format(v, spec).rjust(width)


def _ms(v: Any) -> Any:
    return v * 1000 if isinstance(v, (int, float)) else v


def print_table(rows: list[dict[str, Any]], summary: list[dict[str, Any]], mode: str) -> None:
    latency = mode == "latency"
    head = (f"{'scheduler':<30} {'round':>5} {'pods':>6} {'bound':>6} {'missed':>6} {'create s':>8} "
            f"{'seconds':>8} {'pods/s':>7} {'binds/s':>8} {'vs kube':>7} {'cpu s':>7} {'ms/pod':>7} {'vs kube':>7} "
            f"{'start cpu':>9} {'events':>6} {'dropped':>7}")
    if latency:
        head += (f" {'sli p50':>7} {'sli p99':>7} {'vs kube':>7} {'watch p50':>9} {'watch p99':>9}"
                 f" {'api bind p50':>12} {'api bind p99':>12}")
    print(head)
    kube = {r["round"]: r for r in rows if r["scheduler"] == KUBE}
    for r in rows:
        k = kube.get(r["round"], {})

        def ratio(key: str, r: dict[str, Any] = r, k: dict[str, Any] = k) -> float:
            a, b = r.get(key), k.get(key)
            if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or not b or math.isnan(a):
                return math.nan
            return a / b

        line = (f"{r['scheduler']:<30} {r['round']:>5} {r['created']:>6} {r['bound']:>6} "
                f"{r['never_bound'] + r['rebound']:>6} {_f(r['create_seconds'], '.2f', 8)} "
                f"{_f(r['seconds'], '.2f', 8)} {_f(r['pods_per_second'], '.1f', 7)} "
                f"{_f(r['bind_pods_per_second'], '.1f', 8)} {_f(ratio('bind_pods_per_second'), '.2f', 6)}x "
                f"{_f(r['cpu_seconds'], '.2f', 7)} {_f(r['cpu_ms_per_pod'], '.2f', 7)} "
                f"{_f(ratio('cpu_ms_per_pod'), '.2f', 6)}x {_f(r['cpu_startup_seconds'], '.2f', 9)} "
                f"{r['scheduled_events']:>6} {r['events_dropped']:>7}")
        if latency:
            line += (f" {_f(_ms(r['sli_p50_seconds']), '.0f', 5)}ms {_f(_ms(r['sli_p99_seconds']), '.0f', 5)}ms "
                     f"{_f(ratio('sli_p99_seconds'), '.2f', 6)}x {_f(_ms(r['watch_p50_seconds']), '.0f', 7)}ms "
                     f"{_f(_ms(r['watch_p99_seconds']), '.0f', 7)}ms {_f(_ms(r['api_bind_p50_seconds']), '.1f', 10)}ms "
                     f"{_f(_ms(r['api_bind_p99_seconds']), '.1f', 10)}ms")
        if not r["complete"]:
            line += "  INCOMPLETE"
        print(line)
    print()
    head = (f"{'median over rounds':<30} {'rounds':>6} {'failed':>6} {'binds/s':>8} {'vs kube':>7} "
            f"{'ms/pod':>7} {'vs kube':>7} {'events':>6} {'dropped':>7}")
    if latency:
        head += f" {'sli p50':>7} {'sli p99':>7} {'vs kube':>7} {'watch p99':>9}"
    print(head)
    for s in summary:
        line = (f"{s['scheduler']:<30} {s['rounds']:>6} {s['failed_rounds']:>6} "
                f"{_f(s['bind_pods_per_second'], '.1f', 8)} {_f(s['binds_ratio'], '.2f', 6)}x "
                f"{_f(s['cpu_ms_per_pod'], '.2f', 7)} {_f(s['cpu_per_pod_ratio'], '.2f', 6)}x "
                f"{_f(s['scheduled_events'], '.0f', 6)} {_f(s['events_dropped'], '.0f', 7)}")
        if latency:
            line += (f" {_f(_ms(s['sli_p50_seconds']), '.0f', 5)}ms {_f(_ms(s['sli_p99_seconds']), '.0f', 5)}ms "
                     f"{_f(s['sli_p99_ratio'], '.2f', 6)}x {_f(_ms(s['watch_p99_seconds']), '.0f', 7)}ms")
        print(line)


def _jsonable(v: Any) -> Any:
    """NaN and infinities (not JSON) as null."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    return v



def delete_pods(api: KubeApi, ns: str, deadline: float) -> None:
    """deletecollection of the namespace's pods, asked again when the API server ends it part way (10,000
    pods), until `deadline`."""
    while True:
        try:
            api.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0},
                        timeout=(10.0, 120.0))
            return
        except (ApiError, TransportError) as e:
            if time.monotonic() > deadline:
                log(f"deleting the pods of {ns}: {e}; waiting for them anyway")
                return
            log(f"deleting the pods of {ns}: {e}; asking again")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("backlog", "steady", "latency"), default="backlog")
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=2000, help="pods per run (backlog, steady)")
    ap.add_argument("--rate", type=float, default=100.0, help="latency mode: pods created per second")
    ap.add_argument("--duration", type=float, default=60.0, help="latency mode: seconds of creation")
    ap.add_argument("--rounds", type=int, default=1, help="each scheduler this many times, interleaved")
    ap.add_argument("--baseline-repo", metavar="DIR", default="",
                    help="also run `wasmsched run`, and with its NodeNumber guest, from this checkout (set up, with "
                         "its generated modules and its examples/nodenumber/nodenumber.wasm): a before/after")
    ap.add_argument("--jemalloc", action="store_true",
                    help="also run `wasmsched run` on jemalloc, as the image does (LD_PRELOAD, MALLOC_CONF)")
    ap.add_argument("--qps", type=int, default=0,
                    help="the schedulers' clientConnection qps (burst twice that); default: kube's 50/100")
    ap.add_argument("--out", default="", help="JSON results (default bench/results/real_cluster_<mode>.json)")
    args = ap.parse_args()
    if args.nodes < 1 or args.pods < 1 or args.rounds < 1 or args.rate <= 0 or args.duration <= 0:
        ap.error("--nodes, --pods, --rounds, --rate and --duration must be positive")
    out_path = Path(args.out or ROOT / f"bench/results/real_cluster_{args.mode}.json")
    pods = max(1, round(args.rate * args.duration)) if args.mode == "latency" else args.pods
    kube_scheduler = Path(os.environ.get("WASMSCHED_KUBE_BIN", "") or bin_dir()) / "kube-scheduler"
    wasm = ROOT / NODENUMBER_WASM
    needs = [(kube_scheduler, "make kube-scheduler"), (wasm, f"make {NODENUMBER_WASM}")]
    if args.baseline_repo:
        base_wasm = Path(args.baseline_repo) / NODENUMBER_WASM
        needs.append((base_wasm, f"make -C {args.baseline_repo} setup {NODENUMBER_WASM}"))
    for need, how in needs:
        if not need.exists():
            print(f"error: {need} is missing: run `{how}`", file=sys.stderr)
            return 2
    load_before = [round(x, 2) for x in os.getloadavg()]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="wasmsched-bench-") as d:
        tmp = Path(d)
        t = time.perf_counter()
        cluster = DevCluster.up(tmp / "cluster", die_with_parent=True)
        log(f"dev-cluster up in {time.perf_counter() - t:.1f} s ({cluster.server})")
        args.admin_token = cluster.admin_token
        try:
            # The benchmark's own requests (creates, the watch) are not rate-limited.
            api = KubeApi(load_configuration(str(cluster.kubeconfig)), ClientConnection(qps=0))
            create_nodes(api, cluster, args.nodes)
            runs = schedulers(args, kube_scheduler, wasm, cluster.kubeconfig, tmp)
            for r in range(args.rounds):
                for i, sched in rotated(runs, r):
                    name = f"s{r}x{i}"
                    log(f"round {r}: {sched.label} ({args.mode}, {pods} pods, schedulerName {name})")
                    row = run_one(api, cluster, sched, name, args, pods, tmp)
                    row["round"] = r
                    rows.append(row)
                    print(json.dumps(_jsonable({k: v for k, v in row.items() if k != "never_bound_names"})),
                          file=sys.stderr)
            api.close()
        finally:
            cluster.down()
    summary = summarize(rows, KUBE)
    print(f"# mode {args.mode}: {args.nodes} nodes, {pods} pods per run"
          + (f" ({args.rate:g}/s for {args.duration:g} s)" if args.mode == "latency" else "")
          + f", qps {args.qps or 'kube default 50/100'}, {args.rounds} round(s), {os.cpu_count()} CPUs")
    print_table(rows, summary, args.mode)
    doc = {"machine": {"python": platform.python_version(), "implementation": platform.python_implementation(),
                       "machine": platform.machine(), "cpus": os.cpu_count(), "load_avg_before": load_before,
                       "load_avg_after": [round(x, 2) for x in os.getloadavg()]},
           "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "mode": args.mode, "nodes": args.nodes, "pods": pods,
           "rate": args.rate if args.mode == "latency" else None,
           "duration": args.duration if args.mode == "latency" else None,
           "qps": args.qps or "kube default (50, burst 100)", "burst": 2 * args.qps if args.qps else None,
           "rounds": args.rounds, "kube_scheduler": KUBE_VERSION, "summary": summary, "results": rows}
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(_jsonable(doc), indent=1) + "\n")
    log(f"wrote {out_path}")
    return 0 if all(r["complete"] for r in rows) else 1


def rotated(runs: list[T], r: int) -> list[tuple[int, T]]:
    """Round r's order: the schedulers (with their index) starting from the (r mod n)-th."""
    k = r % len(runs)
    return list(enumerate(runs))[k:] + list(enumerate(runs))[:k]


if __name__ == "__main__":
    sys.exit(main())
