"""`wasmsched run` as a new user meets it (issue 23): what it says at the default verbosity, a taken
--secure-port, a dead API server."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import stat
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.go_guests import ROOT
from wasmsched.devcluster.processes import free_port

from .helpers import wait_for
from .run_helpers import https_get, scheduler_config, unique


class Run:
    """`wasmsched run ARGS` exactly as typed (no -v: the default verbosity), stderr kept in a file."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.log_path = tmp / f"run-{uuid.uuid4().hex[:6]}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_SERVICE")}
        env["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen([sys.executable, "-m", "wasmsched", "run", *args], stdout=subprocess.PIPE,
                                     stderr=self._log, env=env, cwd=ROOT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
        out = self.proc.stdout.read().decode() if self.proc.stdout else ""
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode, out


def messages(log: str) -> list[str]:
    """The quoted message of each klog line, in order."""
    return [m.group(1) for m in re.finditer(r'^[IWEF]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] "((?:[^"\\]|\\.)*)"', log,
                                            re.MULTILINE)]


def test_default_verbosity_logs_what_kube_scheduler_logs_at_v0_with_leader_election(
        dev_cluster: Any, tmp_path: Path) -> None:
    lease = unique("lease")
    port = free_port()
    run = Run(tmp_path, "--kubeconfig", str(dev_cluster.kubeconfig), "--secure-port", str(port),
              "--config", str(scheduler_config(tmp_path / "cfg.yaml", unique("sched"), lease=lease)))
    try:
        wait_for("the lease acquired", lambda: "Successfully acquired lease" in run.log())
    finally:
        code, out = run.stop()
    log = run.log()
    assert code == 0, log
    assert out == ""
    got = messages(log)
    expected = ["Generated self-signed cert in-memory", "Starting Kubernetes Scheduler",
                f"Serving securely on 127.0.0.1:{port}", "Waiting for caches to sync", "Caches are synced",
                "Attempting to acquire leader lease...", "Successfully acquired lease"]
    assert [m for m in got if m in expected] == expected, log
    assert f'"Successfully acquired lease" lock="kube-system/{lease}"' in log
    assert 'version="wasmsched ' in log and "kubernetes v1.37.2" in log
    # Only V(0) lines: the informers' and the elector's V(2)+ lines stay hidden.
    assert "Caches populated" not in log and "Released lease" not in log, log
    assert all(line[0] == "I" for line in log.splitlines()), log


def test_default_verbosity_logs_what_kube_scheduler_logs_at_v0_without_leader_election(
        dev_cluster: Any, tmp_path: Path) -> None:
    port = free_port()
    run = Run(tmp_path, "--kubeconfig", str(dev_cluster.kubeconfig), "--secure-port", str(port),
              "--config", str(scheduler_config(tmp_path / "cfg.yaml", unique("sched"))))
    try:
        wait_for("the caches synced", lambda: "Caches are synced" in run.log())
    finally:
        code, _ = run.stop()
    log = run.log()
    assert code == 0, log
    expected = ["Generated self-signed cert in-memory", "Starting Kubernetes Scheduler",
                f"Serving securely on 127.0.0.1:{port}", "Waiting for caches to sync", "Caches are synced",
                "Stopped listening"]
    assert messages(log) == expected, log
    assert "leaderElect=false" in log


def run_once(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_SERVICE")}
    return subprocess.run([sys.executable, "-m", "wasmsched", "run", *args], check=False, capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env=env)


def test_a_taken_secure_port_exits_2_naming_the_flag() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = run_once("--master", "https://127.0.0.1:1", "--secure-port", str(port))
    assert out.returncode == 2, out.stderr
    assert out.stderr == f"error: --secure-port {port}: address 127.0.0.1:{port} is already in use\n"


@pytest.mark.parametrize(("flags", "expected"), [
    (["--bind-address", "localhost"], "error: --bind-address localhost: not an IP address"),
    (["--secure-port", "65536"],
     "error: --secure-port 65536 must be between 0 and 65535, inclusive. 0 for turning off secure port"),
    # TEST-NET-3: not an address of any host here.
    (["--bind-address", "203.0.113.7", "--secure-port", "10259"],
     "error: --bind-address 203.0.113.7: not an address of this host (Cannot assign requested address)"),
    (["--secure-port", "0", "--tls-cert-file", "/nonexistent.crt"], None),  # serving off: never read
    (["--tls-cert-file", "{tmp}/x.crt", "--tls-private-key-file", "{tmp}/x.crt", "--secure-port", "{port}"],
     "error: --tls-cert-file/--tls-private-key-file: {tmp}/x.crt, {tmp}/x.crt: not a valid certificate and key pair"),
])
def test_bad_serving_flags_exit_2_naming_the_flag(tmp_path: Path, flags: list[str], expected: str | None) -> None:
    (tmp_path / "x.crt").write_text("not a certificate\n")
    port = str(free_port())
    args = [f.format(tmp=tmp_path, port=port) for f in flags]
    if expected is None:
        # Accepted: the process starts (and is stopped at once).
        run = Run(tmp_path, "--master", "https://127.0.0.1:1", "--leader-elect=false", *args)
        wait_for("the start-up line", lambda: "Starting Kubernetes Scheduler" in run.log())
        code, _ = run.stop()
        assert code == 0, run.log()
        return
    out = run_once("--master", "https://127.0.0.1:1", *args)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected.format(tmp=tmp_path)), out.stderr


class RefusingServer:
    """A loopback port that accepts connections and closes them at once (no TLS): every request fails, and
    the connections made are counted."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()
        self._thread.join(5)


def test_a_dead_api_server_gives_one_line_per_informer_per_backoff_step(tmp_path: Path) -> None:
    server = RefusingServer()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "https://127.0.0.1:{server.port}", insecure-skip-tls-verify: true}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
""")
    run = Run(tmp_path, "--kubeconfig", str(kubeconfig), "--secure-port", "0", "--leader-elect=false")
    try:
        # Two backoff steps (0.8 s and 1.6 s, each with up to 100% jitter) for the Pod and Node informers.
        wait_for("two retries of the Pod and Node informers", lambda: all(
            run.log().count(f'"Failed to watch" kind="{k}"') >= 3 for k in ("Pod", "Node")))
    finally:
        code, _ = run.stop()
        server.close()
    log = run.log()
    assert code == 0, log
    lines = [line for line in log.splitlines() if '"Failed to watch"' in line]
    retry_in: dict[str, list[str]] = {}
    for line in lines:
        kind = re.search(r' kind="(\w+)"', line)
        delay = re.search(r' retryIn="([\d.]+)s"$', line)
        assert kind and delay and line.startswith("E"), line
        assert 'err="failed to list ' + kind.group(1) + ": GET https://127.0.0.1:" in line, line
        retry_in.setdefault(kind.group(1), []).append(delay.group(1))
    # One line per attempt: each informer's delays are the backoff's steps, none repeated.
    steps = ["0.8", "1.6", "3.2", "6.4", "12.8", "25.6", "30.0"]
    assert {"Pod", "Node"} <= set(retry_in), retry_in
    for name, delays in retry_in.items():
        assert delays == steps[:len(delays)], (name, delays)
    # One connection per attempt: urllib3 does not retry behind the informer's back (an attempt in
    # flight when the process stopped is not logged).
    assert len(lines) <= server.accepted <= len(lines) + len(retry_in), (server.accepted, len(lines))
    assert "Retrying (" not in log and "Max retries exceeded" not in log, log
    assert "Traceback" not in log


def test_dev_cluster_up_says_how_to_read_metrics_and_its_commands_work(kube_binaries: Any, tmp_path: Path) -> None:
    """`dev-cluster up`'s run and curl lines, taken apart: run with the printed flags (on a free port rather
    than 10259), then /metrics with the printed token file, verified with the printed CA file."""
    d = tmp_path / "c"
    up = subprocess.run([sys.executable, "-m", "wasmsched", "dev-cluster", "up", "--dir", str(d)], check=False,
                        capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert up.returncode == 0, up.stderr
    run = None
    try:
        lines = [line.strip() for line in up.stdout.splitlines()]
        run_line = next(line for line in lines if line.startswith("wasmsched run "))
        curl_line = next(line for line in lines if line.startswith("curl "))
        kubeconfig = d / "kubeconfig"
        argv = shlex.split(run_line.replace('"$KUBECONFIG"', shlex.quote(str(kubeconfig))))
        m = re.fullmatch(r'curl --cacert (\S+) -H "Authorization: Bearer \$\(cat (\S+)\)" '
                         r"https://127\.0\.0\.1:10259/metrics", curl_line)
        assert m, up.stdout
        cafile, token_file = m.group(1), m.group(2)
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        token = Path(token_file).read_text().strip()
        port = free_port()
        run = Run(tmp_path, *argv[2:], "--secure-port", str(port), "--leader-elect=false")
        wait_for("the secure port", lambda: "Serving securely on" in run.log() if run else None)
        url = f"https://127.0.0.1:{port}/metrics"
        status, body = https_get(url, cafile, token)
        assert status == 200, body
        assert "scheduler_pending_pods" in body
        assert https_get(url, cafile)[0] == 401  # the token is what lets it in
        assert https_get(f"https://localhost:{port}/metrics", cafile, token)[0] == 200  # localhost is in the cert
    finally:
        if run is not None:
            code, _ = run.stop()
            assert code == 0, run.log()
        down = subprocess.run([sys.executable, "-m", "wasmsched", "dev-cluster", "down", "--dir", str(d)],
                              check=False, capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert down.returncode == 0, down.stderr
    # `down` removes what `up` suggested run write there.
    assert not d.exists(), sorted(p.name for p in d.iterdir())


def test_the_metrics_reader_may_get_metrics_and_nothing_else(dev_cluster: Any) -> None:
    """kube's bootstrap ClusterRole system:monitoring, through the group of the dev cluster's metrics-reader."""
    assert dev_cluster.metrics_token_file.read_text().strip() == dev_cluster.metrics_reader_token
    with dev_cluster.kube_api(dev_cluster.metrics_reader_token) as api:
        def allowed(attrs: dict[str, Any]) -> bool:
            review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                      "spec": attrs}
            body = api.request_json("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review)
            return bool(body["status"]["allowed"])

        assert allowed({"nonResourceAttributes": {"path": "/metrics", "verb": "get"}})
        assert not allowed({"resourceAttributes": {"verb": "list", "resource": "pods"}})
        assert not allowed({"resourceAttributes": {"verb": "create", "resource": "tokenreviews",
                                                   "group": "authentication.k8s.io"}})
