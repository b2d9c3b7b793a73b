"""Fault-injection scenarios against the dev cluster (issue 29 §1), shared by tests/kube/test_faults.py (small)
and bench/faults.py (full size).

A scenario: N pending pods (a third created up front, the rest while the faults run) on M KWOK nodes, two
`wasmsched run` replicas with leader election on a 4 s lease, each behind its own FaultProxy
(wasmsched/devcluster/faultproxy.py; TLS passes through, the kubeconfig points at the proxy), a wasm plugin
trapping on 5% of its PreFilter calls (failurePolicy Fail: the pod is retried). A replica that exits (a lost
lease exits 1, as kube-scheduler does) is started again, as its Deployment would. Then the faults stop and the
backlog must settle; `check` asserts what must hold and `Result.row` is the table's line.

Binding failures (500/429/409) come from a validating admission webhook on pods/binding: the real API server
answers the binding with the webhook's status code (and Retry-After for 429), over the real TLS connection.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import random
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from wasmsched.api.errors import TransportError
from wasmsched.devcluster import DevCluster
from wasmsched.devcluster.certs import make_serving_cert
from wasmsched.devcluster.faultproxy import FaultProxy
from wasmsched.devcluster.kubeconfig import write_kubeconfig
from wasmsched.devcluster.processes import free_port
from wasmsched.kube.api import ApiError
from wasmsched.kube.client_cluster import EVENT_RETRY_SECONDS

REPO = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 4.0  # renewDeadline 3 s, retryPeriod 500 ms
RSS_LIMIT_MB = 1500.0

# Traps (unreachable) on every 20th PreFilter call of an instance: 5% of the calls.
TRAP_WAT = """
(module
  (memory (export "memory") 1)
  (global $calls (mut i32) (i32.const 0))
  (func (export "prefilter") (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (if (i32.eqz (i32.rem_u (global.get $calls) (i32.const 20))) (then unreachable))
    (i32.const 0))
)
"""


def trap_guest(out: Path) -> Path:
    import wasmtime

    out.write_bytes(wasmtime.wat2wasm(TRAP_WAT))
    return out


def retrying(what: Callable[[], Any], timeout: float = 120.0) -> Any:
    """what(), retried while the API server is unreachable or refusing (a restart, a stalled etcd)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return what()
        except (ApiError, TransportError, OSError) as e:
            if isinstance(e, ApiError) and e.status in (404, 409, 422):
                raise
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


# ----- binding failures: a validating admission webhook ---------------------------------------------------


class BindingFaultWebhook:
    """Denies `fraction` of pods/binding CREATEs in `namespace` with 500, 429 or 409 (at random); the API
    server answers the scheduler's binding with that code."""

    def __init__(self, cluster: DevCluster, namespace: str, fraction: float, seed: int = 0) -> None:
        self.cluster, self.namespace, self.fraction = cluster, namespace, fraction
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.seen = 0
        self.denied: dict[int, int] = {}
        self.active = True
        pki = cluster.directory / "pki"
        ca_cert = x509.load_pem_x509_certificate((pki / "ca.crt").read_bytes())
        ca_key = serialization.load_pem_private_key((pki / "ca.key").read_bytes(), None)
        cert, key = make_serving_cert(ca_cert, ca_key, "binding-fault-webhook")  # type: ignore[arg-type]
        d = cluster.directory / f"webhook-{uuid.uuid4().hex[:6]}"
        d.mkdir()
        (d / "tls.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        (d / "tls.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                      serialization.NoEncryption()))
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(d / "tls.crt", d / "tls.key")
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                resp: dict[str, Any] = {"uid": review["request"]["uid"], "allowed": True}
                with hook.lock:
                    hook.seen += 1
                    if hook.active and hook.rng.random() < hook.fraction:
                        code = hook.rng.choice((500, 429, 409))
                        hook.denied[code] = hook.denied.get(code, 0) + 1
                        reason = {500: "InternalError", 429: "TooManyRequests", 409: "Conflict"}[code]
                        status: dict[str, Any] = {"code": code, "reason": reason, "message": "injected fault"}
                        if code == 429:
                            status["details"] = {"retryAfterSeconds": 1}
                        resp = {**resp, "allowed": False, "status": status}
                body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                   "response": resp}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.name = f"binding-faults-{namespace}"[:63].rstrip("-")
        ca = base64.b64encode((pki / "ca.crt").read_bytes()).decode()
        with cluster.kube_api() as api:
            api.request_json("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", body={
                "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                "metadata": {"name": self.name},
                "webhooks": [{
                    "name": "binding-faults.wasmsched.test",
                    "clientConfig": {"url": f"https://127.0.0.1:{self.server.server_address[1]}/validate",
                                     "caBundle": ca},
                    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                               "resources": ["pods/binding"], "scope": "Namespaced"}],
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                    "failurePolicy": "Ignore", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                    "timeoutSeconds": 5}]})

    def close(self) -> None:
        with self.cluster.kube_api() as api, contextlib.suppress(ApiError):
            api.request("DELETE", f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{self.name}")
        self.server.shutdown()
        self.server.server_close()


# ----- replicas ---------------------------------------------------------------------------------------------


@dataclass
class Incarnation:
    proc: subprocess.Popen[bytes]
    log: Path
    port: int
    cert_dir: Path
    metrics: str = ""
    rss_mb: float = 0.0
    exit_code: int | None = None


@dataclass
class Replica:
    name: str
    proxy: FaultProxy
    kubeconfig: Path
    runs: list[Incarnation] = field(default_factory=list)

    @property
    def current(self) -> Incarnation:
        return self.runs[-1]


def sample_sum(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        if head.split("{")[0] != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', head))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(value)
    return total


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


# ----- a scenario -------------------------------------------------------------------------------------------


@dataclass
class Result:
    scenario: str
    pods: int
    bound: int
    scheduled_events: int
    double_events: int
    missing_events: int
    metric_scheduled: float
    metrics_complete: bool
    retries: float
    http_retries: float
    traps: float
    leader_changes: int
    restarts: int
    settle_seconds: float
    seconds: float
    max_rss_mb: float
    lease_overlaps: list[str]
    tracebacks: list[str]
    bad_exits: list[str]
    pending: list[str]
    extra: dict[str, Any]

    def events_lost(self) -> int:
        return sum(int(self.extra.get(k, 0)) for k in ("events_refused", "events_dropped", "events_unwritten"))

    def row(self) -> str:
        return (f"{self.scenario:<22} {self.pods:>5} {self.bound:>5} {self.bound - self.metric_scheduled:>6.0f} "
                f"{self.missing_events:>7} {self.events_lost():>7} {self.retries:>7.0f} {self.http_retries:>6.0f} "
                f"{self.traps:>5.0f} "
                f"{self.leader_changes:>7} {self.restarts:>8} {self.settle_seconds:>7.1f} {self.seconds:>6.1f} "
                f"{self.max_rss_mb:>6.0f}")


# unack: pods the server bound but the scheduler counted as a failed binding (the reply was lost); noevent: bound
# pods without a Scheduled event (the unacknowledged ones, and events lost); ev lost: events refused, dropped or
# unwritten when a replica exited, as the replicas logged them; retries: scheduling attempts that
# ended in an error (a failed binding, a trap); http: requests the clients sent again (429/5xx with Retry-After,
# a GET whose connection was lost: rest_client_request_retries_total)
HEADER = (f"{'scenario':<22} {'pods':>5} {'binds':>5} {'unack':>6} {'noevent':>7} {'ev lost':>7} {'retries':>7} "
          f"{'http':>6} {'traps':>5} {'leaders':>7} "
          f"{'restarts':>8} {'settle':>7} {'total':>6} {'rss MB':>6}")


def table(results: list[Result]) -> str:
    return "\n".join([HEADER] + [r.row() for r in results])


def _wait_started(inc: Incarnation, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and inc.proc.poll() is None:
        if "Starting Kubernetes Scheduler" in inc.log.read_text(errors="replace"):
            return
        time.sleep(0.1)


class FaultRun:
    def __init__(self, cluster: DevCluster, workdir: Path, namespace: str, pods: int, nodes: int,
                 seed: int = 0) -> None:
        self.cluster, self.workdir, self.namespace = cluster, workdir, namespace
        self.n_pods, self.n_nodes = pods, nodes
        self.tag = uuid.uuid4().hex[:6]
        self.sched, self.lease_name = f"faults-{self.tag}", f"faults-{self.tag}"
        self.rng = random.Random(seed)
        self.admin = cluster.kube_api()
        self.stopping = threading.Event()
        self.lease_history: list[tuple[float, str, str, str, int]] = []  # (seen, holder, acquire, renew, transitions)
        self.replicas: list[Replica] = []
        self.threads: list[threading.Thread] = []
        self.extra: dict[str, Any] = {}
        workdir.mkdir(parents=True, exist_ok=True)
        guest = trap_guest(workdir / "trap.wasm")
        self.config = workdir / "config.yaml"
        self.config.write_text(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "clientConnection:\n  qps: 200\n  burst: 400\n"
            f"leaderElection:\n  leaderElect: true\n  resourceName: {self.lease_name}\n"
            "  resourceNamespace: kube-system\n  leaseDuration: 4s\n  renewDeadline: 3s\n  retryPeriod: 500ms\n"
            f"profiles:\n- schedulerName: {self.sched}\n"
            "  plugins:\n    multiPoint:\n      enabled:\n      - name: Trap\n"
            f"  pluginConfig:\n  - name: Trap\n    args:\n      guestURL: {guest}\n")

    # --- set-up ---
    def create_nodes(self) -> None:
        self.cluster.create_nodes(self.n_nodes, prefix=f"faults-{self.tag}-", cpu="4", memory="32Gi",
                                  labels={"faults": self.tag})

    def delete_nodes(self) -> None:
        for i in range(self.n_nodes):
            with contextlib.suppress(ApiError, OSError):
                self.admin.request("DELETE", f"/api/v1/nodes/faults-{self.tag}-{i}")

    def pod(self, i: int) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{i:05d}"},
                "spec": {"schedulerName": self.sched, "terminationGracePeriodSeconds": 0,
                         "nodeSelector": {"faults": self.tag},
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                         "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}]}}

    def create_pods(self, first: int, last: int, spread: float = 0.0) -> None:
        start = time.monotonic()
        for i in range(first, last):
            if spread:
                due = start + spread * (i - first) / max(1, last - first)
                if (left := due - time.monotonic()) > 0:
                    time.sleep(left)

            def post(i: int = i) -> None:
                try:
                    self.admin.request_json("POST", f"/api/v1/namespaces/{self.namespace}/pods", body=self.pod(i))
                except ApiError as e:
                    if e.status != 409:  # an ambiguous create (connection cut after it) that did happen
                        raise

            retrying(post)

    def replica(self, name: str) -> Replica:
        proxy = FaultProxy.for_server(self.cluster.server, seed=self.rng.randrange(1 << 30))
        kubeconfig = self.workdir / f"{name}.kubeconfig"
        write_kubeconfig(kubeconfig, proxy.url, self.cluster.ca_file, self.cluster.admin_token)
        r = Replica(name, proxy, kubeconfig)
        self.replicas.append(r)
        self.start(r)
        return r

    def start(self, r: Replica) -> None:
        port = free_port()
        log = self.workdir / f"{r.name}-{len(r.runs)}.log"
        cert_dir = self.workdir / f"{r.name}-certs"
        argv = [sys.executable, "-m", "wasmsched", "run", "--kubeconfig", str(r.kubeconfig), "--config",
                str(self.config), "--secure-port", str(port), "--cert-dir", str(cert_dir), "-v", "2"]
        with open(log, "wb") as f:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=f, cwd=REPO,
                                    env={**__import__("os").environ, "PYTHONUNBUFFERED": "1"})
        r.runs.append(Incarnation(proc, log, port, cert_dir))

    # --- monitoring ---
    def _watch_lease(self) -> None:
        last: tuple[str, str, str, int] | None = None
        path = f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{self.lease_name}"
        while not self.stopping.is_set():
            with contextlib.suppress(ApiError, TransportError, OSError):
                spec = self.admin.request_json("GET", path)["spec"]
                cur = (spec.get("holderIdentity") or "", spec.get("acquireTime") or "", spec.get("renewTime") or "",
                       spec.get("leaseTransitions") or 0)
                if cur != last:
                    self.lease_history.append((time.time(), *cur))
                    last = cur
            self.stopping.wait(0.2)

    def _supervise(self) -> None:
        while not self.stopping.is_set():
            for r in self.replicas:
                inc = r.current
                code = inc.proc.poll()
                if code is not None and inc.exit_code is None:
                    inc.exit_code = code
                    self.start(r)  # as its Deployment would
                elif code is None:
                    inc.rss_mb = max(inc.rss_mb, _rss_mb(inc.proc.pid))
            self.stopping.wait(0.5)

    def scrape(self, inc: Incarnation, timeout: float = 3.0) -> None:
        crt = inc.cert_dir / "kube-scheduler.crt"
        if not crt.exists():
            return
        ctx = ssl.create_default_context(cafile=str(crt))
        req = urllib.request.Request(f"https://127.0.0.1:{inc.port}/metrics",
                                     headers={"Authorization": f"Bearer {self.cluster.admin_token}"})
        with contextlib.suppress(OSError, ssl.SSLError, urllib.error.URLError, ValueError), \
                urllib.request.urlopen(req, context=ctx, timeout=timeout) as resp:
            text = resp.read().decode()
            if "scheduler_schedule_attempts_total" in text:
                inc.metrics = text

    def _scrape_loop(self) -> None:
        while not self.stopping.is_set():
            for r in self.replicas:
                if r.current.proc.poll() is None:
                    self.scrape(r.current)
            self.stopping.wait(1.0)

    def holder(self) -> str:
        return self.lease_history[-1][1] if self.lease_history else ""

    def leader(self, timeout: float = 60.0) -> Replica:
        """The replica whose current process holds the lease (its log says it acquired it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for r in self.replicas:
                text = r.current.log.read_text(errors="replace").lower()
                if "successfully acquired lease" in text and "leaderelection lost" not in text \
                        and r.current.proc.poll() is None:
                    return r
            time.sleep(0.1)
        raise AssertionError("no leader")

    def bound(self) -> int:
        items = retrying(lambda: self.admin.request_json("GET", f"/api/v1/namespaces/{self.namespace}/pods"))["items"]
        return sum(1 for p in items if p["spec"].get("nodeName"))

    # --- the run ---
    def run(self, name: str, inject: Callable[[FaultRun], None], settle_timeout: float = 180.0) -> Result:
        t0 = time.monotonic()
        self.create_nodes()
        first = self.n_pods // 3
        self.create_pods(0, first)
        for target in (self._watch_lease, self._supervise, self._scrape_loop):
            t = threading.Thread(target=target, daemon=True)
            t.start()
            self.threads.append(t)
        self.replica("a")
        self.replica("b")
        self.leader()
        creator = threading.Thread(target=self.create_pods, args=(first, self.n_pods, 8.0), daemon=True)
        creator.start()
        try:
            inject(self)
        finally:
            for r in self.replicas:
                r.proxy.clear()
            with contextlib.suppress(OSError):
                self.cluster.continue_etcd()
        creator.join(120)
        faults_end = time.monotonic()
        deadline = faults_end + settle_timeout
        while self.bound() < self.n_pods and time.monotonic() < deadline:
            time.sleep(0.25)
        settle = time.monotonic() - faults_end
        return self.finish(name, settle, time.monotonic() - t0)

    def finish(self, name: str, settle: float, seconds: float) -> Result:
        ns = self.namespace
        items = retrying(lambda: self.admin.request_json("GET", f"/api/v1/namespaces/{ns}/pods"))["items"]
        bound = [p["metadata"]["name"] for p in items if p["spec"].get("nodeName")]
        pending = sorted(p["metadata"]["name"] for p in items if not p["spec"].get("nodeName"))

        def scheduled_counts() -> dict[str, int]:
            evs = retrying(lambda: self.admin.request_json("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events"))
            out: dict[str, int] = {}
            for e in evs["items"]:
                if e["reason"] == "Scheduled":
                    n = e["regarding"]["name"]
                    out[n] = out.get(n, 0) + 1 + ((e.get("series") or {}).get("count", 1) - 1)
            return out

        # Events are written in the background: wait until they stop coming. One that found no server waits
        # EVENT_RETRY_SECONDS (jittered by up to a quarter) before it is tried again, so they have stopped
        # once none came for longer than that. Some are lost for good: an event the server rejects, and those
        # queued in a replica that lost its lease and exited (as kube-scheduler exits at once).
        quiet_for = EVENT_RETRY_SECONDS * 1.25 + 2.0
        deadline = time.monotonic() + 60
        counts = scheduled_counts()
        changed = time.monotonic()
        while (len(counts) < len(bound) and time.monotonic() < deadline
               and time.monotonic() - changed < quiet_for):
            time.sleep(1.0)
            again = scheduled_counts()
            if again != counts:
                counts, changed = again, time.monotonic()
        # final metrics, then a clean stop
        for r in self.replicas:
            if r.current.proc.poll() is None:
                self.scrape(r.current, timeout=10)
        self.stopping.set()
        for t in self.threads:
            t.join(15)
        for r in self.replicas:
            for inc in r.runs:
                if inc.proc.poll() is None:
                    # A replica the supervisor restarted a moment ago may still be in the interpreter's start-up,
                    # before any handler exists (kube-scheduler's Go runtime has the same window): SIGTERM then
                    # ends it by the signal, which says nothing about how it stops. Its first line says it runs.
                    _wait_started(inc)
                    inc.proc.send_signal(signal.SIGTERM)
                    try:
                        inc.exit_code = inc.proc.wait(20)
                    except subprocess.TimeoutExpired:
                        inc.proc.kill()
                        inc.exit_code = inc.proc.wait(5)
                        inc.exit_code = -9
                        self.extra.setdefault("hung_on_sigterm", []).append(inc.log.name)
                elif inc.exit_code is None:
                    inc.exit_code = inc.proc.returncode
            r.proxy.close()
        incs = [inc for r in self.replicas for inc in r.runs]
        tracebacks = [inc.log.name for inc in incs if "Traceback" in inc.log.read_text(errors="replace")]
        logs = [inc.log.read_text(errors="replace") for inc in incs]
        # Scheduled events the replicas gave up on, by why (the rest of the bound pods without one were queued
        # in a replica when it exited, or are the unacknowledged bindings').
        self.extra["events_refused"] = sum(t.count('"Server rejected event') for t in logs)
        self.extra["events_dropped"] = sum(t.count('"Event dropped') + t.count("retry limit exceeded") for t in logs)
        self.extra["events_unwritten"] = sum(int(n) for t in logs
                                             for n in re.findall(r'"Events not written at shutdown" count=(\d+)', t))
        bad_exits = []
        for inc in incs:
            text = inc.log.read_text(errors="replace")
            if inc.exit_code == 0:
                continue
            if inc.exit_code == 1 and "Leaderelection lost" in text:
                continue
            bad_exits.append(f"{inc.log.name}: exit {inc.exit_code}")
        restarts = sum(len(r.runs) - 1 for r in self.replicas)
        holders = [h for _, h, _, _, _ in self.lease_history if h]
        changes = sum(1 for a, b in itertools.pairwise(holders) if a != b)
        return Result(
            scenario=name, pods=self.n_pods, bound=len(bound), scheduled_events=sum(counts.values()),
            double_events=sum(1 for c in counts.values() if c > 1),
            missing_events=len(set(bound) - set(counts)),
            metric_scheduled=sum(sample_sum(i.metrics, "scheduler_schedule_attempts_total", result="scheduled")
                                 for i in incs),
            # an incarnation that exited keeps only its last scrape (up to a second old)
            metrics_complete=all(i.exit_code == 0 for i in incs),
            retries=sum(sample_sum(i.metrics, "scheduler_schedule_attempts_total", result="error") for i in incs),
            http_retries=sum(sample_sum(i.metrics, "rest_client_request_retries_total") for i in incs),
            traps=sum(sample_sum(i.metrics, "wasmsched_wasm_traps_total") for i in incs),
            leader_changes=changes, restarts=restarts, settle_seconds=settle, seconds=seconds,
            max_rss_mb=max((i.rss_mb for i in incs), default=0.0),
            lease_overlaps=self.lease_overlaps(), tracebacks=tracebacks, bad_exits=bad_exits, pending=pending,
            extra={**self.extra, "proxy": [r.proxy.stats.__dict__ for r in self.replicas]})

    def lease_overlaps(self) -> list[str]:
        """Handovers where the new holder acquired before the old one's last renewal + the lease's duration
        (the API server's lease has one holder; this is when two processes could both believe they lead).
        A release (holder emptied) hands over at once."""
        from wasmsched.api.wellknown import parse_rfc3339

        def secs(t: str) -> float:
            s, n = parse_rfc3339(t)
            return s + n / 1e9

        out = []
        prev: tuple[str, str] | None = None  # (holder, last renewTime seen)
        for _, holder, acquire, renew, _ in self.lease_history:
            if prev and holder and holder != prev[0] and prev[0] and renew:
                gap = secs(acquire) - secs(prev[1])
                if gap < LEASE_SECONDS - 0.1:  # client-go compares on its own clock: 100 ms of rounding
                    out.append(f"{prev[0]} -> {holder} after {gap:.2f}s")
            prev = (holder, renew) if holder else None
        return out

    def close(self) -> None:
        self.stopping.set()
        for r in self.replicas:
            for inc in r.runs:
                if inc.proc.poll() is None:
                    inc.proc.kill()
                    inc.proc.wait(5)
            r.proxy.close()
        with contextlib.suppress(OSError):
            self.cluster.continue_etcd()
        self.delete_nodes()
        self.admin.close()


def check(r: Result) -> None:
    problems = []
    if r.pending:
        problems.append(f"{len(r.pending)} pods left pending: {r.pending[:5]}")
    if r.double_events:
        problems.append(f"{r.double_events} pods with more than one Scheduled event")
    if r.lease_overlaps:
        problems.append(f"lease held by two: {r.lease_overlaps}")
    if r.tracebacks:
        problems.append(f"tracebacks in {r.tracebacks}")
    if r.bad_exits:
        problems.append(f"bad exits: {r.bad_exits}")
    if r.max_rss_mb > RSS_LIMIT_MB:
        problems.append(f"RSS {r.max_rss_mb:.0f} MB")
    if r.extra.get("hung_on_sigterm"):
        problems.append(f"hung on SIGTERM: {r.extra['hung_on_sigterm']}")
    # A binding whose reply was lost (a connection reset after the server committed it) is confirmed by
    # reading the pod back (client_cluster._bound_after_all); only when the server cannot be asked for 30 s
    # is it an error, as it always is to kube-scheduler: no Scheduled event, not counted as scheduled; the
    # informer then sees the pod bound. So what the scheduler counted agrees with its events, and is at most
    # what the server bound.
    if r.metrics_complete and r.metric_scheduled != r.scheduled_events:
        problems.append(f"metrics say {r.metric_scheduled:.0f} scheduled, {r.scheduled_events} Scheduled events")
    # Every bound pod without a Scheduled event is accounted for: its binding's reply was lost (unack; an
    # upper bound unless every replica's last scrape is complete), or its event was refused, dropped, or still
    # unwritten when its replica exited (a lost lease), each logged.
    lost = r.events_lost()
    if r.missing_events > (r.bound - r.metric_scheduled) + lost:
        problems.append(f"{r.missing_events} bound pods without a Scheduled event: {r.bound - r.metric_scheduled:.0f} "
                        f"unacknowledged, {lost} events refused, dropped or unwritten at exit")
    if r.metric_scheduled > r.bound:
        problems.append(f"metrics say {r.metric_scheduled:.0f} scheduled > {r.bound} bound")
    if r.traps <= 0:
        problems.append("the trapping plugin never trapped")
    assert not problems, problems


# ----- the scenarios' fault schedules -----------------------------------------------------------------------


def restart_apiserver_3x(run: FaultRun) -> None:
    for _ in range(3):
        time.sleep(1.5)
        run.cluster.restart_apiserver()


def stall_etcd_2x(run: FaultRun) -> None:
    for _ in range(2):
        time.sleep(1.0)
        run.cluster.stop_etcd()
        try:
            time.sleep(10.0)
        finally:
            run.cluster.continue_etcd()


def latency_and_resets(run: FaultRun) -> None:
    for r in run.replicas:
        r.proxy.latency = 0.2
        r.proxy.reset_fraction = 0.02
        r.proxy.reset_within = 10.0
        r.proxy.cut()  # the connections made before: new ones, under the faults
    time.sleep(12.0)


def blackhole_leader(run: FaultRun) -> None:
    leader = run.leader()
    run.extra["blackholed"] = leader.name
    time.sleep(1.0)
    leader.proxy.blackhole = True
    time.sleep(LEASE_SECONDS * 2)
    leader.proxy.blackhole = False


def binding_faults(run: FaultRun) -> None:
    hook = BindingFaultWebhook(run.cluster, run.namespace, 0.2, seed=1)
    try:
        time.sleep(10.0)
    finally:
        hook.active = False
        run.extra["webhook"] = {"seen": hook.seen, "denied": hook.denied}
        hook.close()


SCENARIOS: dict[str, Callable[[FaultRun], None]] = {
    "apiserver-restart-3x": restart_apiserver_3x,
    "etcd-stall-10s-2x": stall_etcd_2x,
    "latency-200ms-reset-2%": latency_and_resets,
    "leader-blackholed": blackhole_leader,
    "binding-500-429-409": binding_faults,
}
# The tests' size (bench/faults.py's default is 2,000 pods on 200 nodes).
TEST_PODS, TEST_NODES = 300, 30


def run_and_check(run: FaultRun, name: str) -> None:
    result = run.run(name, SCENARIOS[name])
    print(f"\n{HEADER}\n{result.row()}\n{result}")
    check(result)


# The scenarios whose faults are on the connections (tests/kube/test_faults_network.py).
NETWORK = ("latency-200ms-reset-2%", "leader-blackholed", "binding-500-429-409")
