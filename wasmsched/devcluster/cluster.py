"""DevCluster: one dev control plane (etcd, kube-apiserver, kube-controller-manager, KWOK) in a directory,
started in the background and described by DIR/state.json, so `dev-cluster down` in another process finds and stops it.

DIR's layout (everything the cluster writes; `down` removes exactly these):
  state.json  ports, tokens, and each process's PID, argv and log (0600)
  kubeconfig  the admin's kubeconfig (CA embedded)
  pki/        CA, serving certificate, service-account key pair
  tokens.csv  kube-apiserver's static tokens
  metrics-reader.token  the token of user metrics-reader (group system:monitoring: may get /metrics)
  scheduler-certs/  where `dev-cluster up` suggests `wasmsched run --cert-dir` keep its serving certificate
  etcd/       etcd's data
  kwok/       KWOK's work dir and its Stage config
  kube-controller-manager/  its serving certificate
  logs/       etcd.log, kube-apiserver.log, kube-controller-manager.log, kwok.log
  proxy.kubeconfig  the admin's kubeconfig through `dev-cluster proxy` (while one runs)
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client

from wasmsched.devcluster import components, etcd, namespaces, nodes, processes
from wasmsched.devcluster.binaries import KUBE_VERSION, find_binaries
from wasmsched.devcluster.certs import write_pki
from wasmsched.devcluster.kubeconfig import write_kubeconfig
from wasmsched.devcluster.kwok_stages import STAGES_YAML
from wasmsched.devcluster.tokens import StaticTokens, new_tokens, write_token_auth_file, write_token_file
from wasmsched.kube.api import ClientConnection, KubeApi, load_configuration

log = logging.getLogger(__name__)

# Relative to the current directory, as kind and minikube keep theirs per project: a checkout's tests and
# its developer's cluster do not collide with another checkout's.
DEFAULT_DIR = Path(".dev-cluster")
STATE_FILE = "state.json"
# Start-up order; stopped in reverse.
ETCD, APISERVER, CONTROLLER_MANAGER, KWOK = "etcd", "kube-apiserver", "kube-controller-manager", "kwok"
ORDER = (ETCD, APISERVER, CONTROLLER_MANAGER, KWOK)
METRICS_TOKEN_FILE = "metrics-reader.token"
SCHEDULER_CERT_DIR = "scheduler-certs"
PROXY_KUBECONFIG = "proxy.kubeconfig"
_OWNED = (STATE_FILE, "kubeconfig", PROXY_KUBECONFIG, "pki", "tokens.csv", METRICS_TOKEN_FILE, SCHEDULER_CERT_DIR,
          "etcd", "kwok", CONTROLLER_MANAGER, "logs")
READY_TIMEOUT_SECONDS = 120.0
_POLL_SECONDS = 0.1
_LOG_TAIL_LINES = 20


class DevClusterError(Exception):
    pass


@dataclass
class ProcessState:
    pid: int
    argv: list[str]
    log: str


@dataclass
class State:
    kube_version: str
    server: str
    etcd_endpoint: str
    kwok_endpoint: str
    admin_token: str
    restricted_token: str
    processes: dict[str, ProcessState] = field(default_factory=dict)
    metrics_reader_token: str = ""  # absent from the state of a cluster started before it existed


def _write_state(path: Path, state: State) -> None:
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds the tokens
    with os.fdopen(fd, "w") as f:
        json.dump(asdict(state), f, indent=2)
    tmp.replace(path)


def _read_state(path: Path) -> State:
    try:
        raw = json.loads(path.read_text())
        procs = {name: ProcessState(**p) for name, p in raw.pop("processes").items()}
        return State(**raw, processes=procs)
    except (ValueError, KeyError, TypeError) as e:
        raise DevClusterError(f"{path}: not a dev cluster state file ({e})") from e


def _log_tail(path: str) -> str:
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-_LOG_TAIL_LINES:])


class DevCluster:
    """A running dev cluster. `DevCluster.up(dir)` starts one; `DevCluster.load(dir)` attaches to one."""

    def __init__(self, directory: Path, state: State, die_with_parent: bool = False) -> None:
        self.directory = directory
        self._state = state
        self._die_with_parent = die_with_parent
        # Seconds from starting kube-apiserver to its /readyz answering ok (the last start).
        self.apiserver_ready_seconds: float | None = None

    # --- where things are -------------------------------------------------------------------------
    @property
    def kubeconfig(self) -> Path:
        return self.directory / "kubeconfig"

    @property
    def proxy_kubeconfig(self) -> Path:
        return self.directory / PROXY_KUBECONFIG

    def write_proxy_kubeconfig(self, server: str) -> Path:
        """The admin's kubeconfig with `server` (a fault proxy's URL) in place of kube-apiserver's."""
        write_kubeconfig(self.proxy_kubeconfig, server, self.ca_file, self.admin_token)
        return self.proxy_kubeconfig

    @property
    def server(self) -> str:
        return self._state.server

    @property
    def ca_file(self) -> Path:
        return self.directory / "pki" / "ca.crt"

    @property
    def admin_token(self) -> str:
        return self._state.admin_token

    @property
    def restricted_token(self) -> str:
        """A user with no groups beyond system:authenticated: authenticated, and RBAC forbids it nearly all."""
        return self._state.restricted_token

    @property
    def metrics_reader_token(self) -> str:
        """User metrics-reader, in group system:monitoring: RBAC allows it `get` on /metrics, nothing else."""
        return self._state.metrics_reader_token

    @property
    def metrics_token_file(self) -> Path:
        """The metrics reader's token alone (for `curl -H "Authorization: Bearer $(cat FILE)"`)."""
        return self.directory / METRICS_TOKEN_FILE

    @property
    def scheduler_cert_dir(self) -> Path:
        """A --cert-dir for `wasmsched run`: its self-signed certificate (and CA) land there, to verify it by."""
        return self.directory / SCHEDULER_CERT_DIR

    @property
    def scheduler_ca_file(self) -> Path:
        """What verifies run's self-signed certificate: the certificate file in --cert-dir (kube/servingcert.py's
        pair name), which holds the certificate followed by the CA that signed it."""
        return self.scheduler_cert_dir / "kube-scheduler.crt"

    @property
    def etcd_endpoint(self) -> str:
        return self._state.etcd_endpoint

    @property
    def log_dir(self) -> Path:
        return self.directory / "logs"

    @property
    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self._processes().items()}

    def _processes(self) -> dict[str, ProcessState]:
        """The recorded processes as state.json has them now: another process (`dev-cluster
        restart-apiserver`) may have started one since this object read it."""
        state_file = self.directory / STATE_FILE
        if state_file.exists():
            self._state.processes = _read_state(state_file).processes
        return self._state.processes

    # --- lifecycle --------------------------------------------------------------------------------
    @classmethod
    def up(cls, directory: Path | str = DEFAULT_DIR, nodes: int = 0, apiserver_args: Sequence[str] = (),
           timeout: float = READY_TIMEOUT_SECONDS, die_with_parent: bool = False) -> DevCluster:
        """Starts etcd, kube-apiserver, kube-controller-manager (components.CONTROLLERS) and KWOK in the
        background, waits for each, creates `nodes` KWOK nodes.
        On failure, whatever was started is stopped (the logs stay in DIR/logs) and DevClusterError says why.
        Raises BinariesMissingError before touching DIR when a binary is missing. With die_with_parent (tests),
        the processes get SIGTERM when the calling thread dies, even if it never calls down()."""
        bins = find_binaries()
        directory = Path(directory).absolute()
        state_file = directory / STATE_FILE
        if state_file.exists():
            old = cls.load(directory)
            if old.running():
                raise DevClusterError(f"a dev cluster already runs in {directory} ({old.server}); "
                                      f"`wasmsched dev-cluster down --dir {directory}` first")
            old.down()  # a stale one (crashed or rebooted): start afresh
        directory.mkdir(parents=True, exist_ok=True)
        pki = write_pki(directory / "pki")
        tokens: StaticTokens = new_tokens()
        write_token_auth_file(directory / "tokens.csv", tokens)
        write_token_file(directory / METRICS_TOKEN_FILE, tokens.metrics_reader)
        etcd_client, etcd_peer, apiserver, controller_manager, kwok = processes.free_ports(5)
        ports = components.Ports(etcd_client=etcd_client, etcd_peer=etcd_peer, apiserver=apiserver,
                                 controller_manager=controller_manager, kwok=kwok)
        state = State(kube_version=KUBE_VERSION, server=f"https://127.0.0.1:{ports.apiserver}",
                      etcd_endpoint=f"http://127.0.0.1:{ports.etcd_client}",
                      kwok_endpoint=f"http://127.0.0.1:{ports.kwok}",
                      admin_token=tokens.admin, restricted_token=tokens.restricted,
                      metrics_reader_token=tokens.metrics_reader)
        cluster = cls(directory, state, die_with_parent)
        try:
            cluster._start(ETCD, components.etcd_argv(bins.etcd, directory / "etcd", ports))
            cluster._wait(ETCD, lambda: etcd.healthy(state.etcd_endpoint), timeout)
            write_kubeconfig(cluster.kubeconfig, state.server, pki.ca_cert, tokens.admin)
            cluster._start_apiserver(components.kube_apiserver_argv(
                bins.kube_apiserver, pki, directory / "tokens.csv", directory / "pki", ports, apiserver_args),
                timeout)
            cluster._start(CONTROLLER_MANAGER, components.kube_controller_manager_argv(
                bins.kube_controller_manager, cluster.kubeconfig, directory / CONTROLLER_MANAGER, ports))
            # Self-signed: its certificate is its own, not the cluster CA's.
            insecure = ssl.create_default_context()
            insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
            cluster._wait(CONTROLLER_MANAGER,
                          lambda: _http_ok(f"https://127.0.0.1:{ports.controller_manager}/healthz", insecure), timeout)
            kwok_dir = directory / "kwok"
            kwok_dir.mkdir(exist_ok=True)
            (kwok_dir / "stages.yaml").write_text(STAGES_YAML)
            # KWOK_WORKDIR keeps it from loading the user's ~/.kwok/kwok.yaml into the cluster.
            cluster._start(KWOK, components.kwok_argv(bins.kwok, cluster.kubeconfig, kwok_dir / "stages.yaml", ports),
                           env={**os.environ, "KWOK_WORKDIR": str(kwok_dir)})
            cluster._wait(KWOK, lambda: _http_ok(state.kwok_endpoint + "/healthz"), timeout)
            if nodes:
                cluster.create_nodes(nodes, timeout=timeout)
        except BaseException:
            cluster._stop_all()
            raise
        return cluster

    @classmethod
    def load(cls, directory: Path | str = DEFAULT_DIR) -> DevCluster:
        directory = Path(directory).absolute()
        state_file = directory / STATE_FILE
        if not state_file.exists():
            raise DevClusterError(f"no dev cluster in {directory} ({STATE_FILE} not found)")
        return cls(directory, _read_state(state_file))

    def running(self) -> dict[str, int]:
        """The recorded processes that still run (name: PID)."""
        return {name: p.pid for name, p in self._processes().items() if processes.running(p.pid, p.argv[0])}

    def down(self) -> list[str]:
        """Stops every process (SIGTERM, then SIGKILL), removes the cluster's files from DIR (and DIR if that
        leaves it empty); returns the names of the processes that were running. Idempotent."""
        stopped = self._stop_all()
        for name in _OWNED:
            p = self.directory / name
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # not empty: the user's own files stay
            self.directory.rmdir()
        return stopped

    def restart_apiserver(self, timeout: float = READY_TIMEOUT_SECONDS) -> None:
        """Stops kube-apiserver and starts it again with the same arguments (so the same port), waits ready.
        Every watch and connection to it is cut; the data (in etcd) stays."""
        p = self._processes()[APISERVER]
        processes.stop(p.pid, p.argv[0])
        self._start_apiserver(p.argv, timeout)

    def stop_etcd(self) -> None:
        """SIGSTOP to etcd: it keeps its connections and answers nothing (a stalled disk, a frozen VM) until
        continue_etcd(). kube-apiserver's requests to it hang until their own timeouts."""
        p = self._processes()[ETCD]
        os.kill(p.pid, signal.SIGSTOP)

    def continue_etcd(self) -> None:
        """SIGCONT to a stopped etcd."""
        p = self._processes()[ETCD]
        os.kill(p.pid, signal.SIGCONT)

    def compact_etcd(self) -> int:
        """Compacts etcd at its current revision; returns it. Reads or watches from a resourceVersion older than
        that, which the apiserver's watch cache cannot serve, are then answered 410 Gone."""
        return etcd.compact(self.etcd_endpoint)

    # --- clients and objects ----------------------------------------------------------------------
    def kube_api(self, token: str | None = None) -> KubeApi:
        """A KubeApi as the admin (the kubeconfig's credentials) or as `token`'s user; not rate-limited
        (qps 0): for the cluster's own set-up and for tests. Close it (or use it in a `with`)."""
        if token is None:
            conf = load_configuration(str(self.kubeconfig))
        else:
            conf = client.Configuration()
            conf.host = self.server
            conf.ssl_ca_cert = str(self.ca_file)
            conf.api_key = {"BearerToken": f"Bearer {token}"}
        return KubeApi(conf, ClientConnection(qps=0))

    def create_nodes(self, n: int, prefix: str = "kwok-node-", start: int = 0, wait_ready: bool = True,
                     timeout: float = 60.0, **node_args: Any) -> list[dict[str, Any]]:
        """Creates KWOK nodes prefix0..prefix(n-1) (from `start`); node_args go to nodes.kwok_node (cpu,
        memory, pods, labels, managed)."""
        with self.kube_api() as api:
            return nodes.create_nodes(api, [f"{prefix}{i}" for i in range(start, start + n)],
                                      wait_ready=wait_ready, timeout=timeout, **node_args)

    def create_namespace(self, name: str, labels: dict[str, str] | None = None) -> None:
        with self.kube_api() as api:
            namespaces.create_namespace(api, name, labels)

    def delete_namespace(self, name: str) -> None:
        """Deletes the namespace and everything in it now (there is no namespace controller to do it)."""
        with self.kube_api() as api:
            namespaces.purge_namespace(api, name)

    # --- internals --------------------------------------------------------------------------------
    def _start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        log_path = self.log_dir / f"{name}.log"
        pid = processes.start(argv, log_path, env, die_with_parent=self._die_with_parent)
        self._state.processes[name] = ProcessState(pid=pid, argv=argv, log=str(log_path))
        _write_state(self.directory / STATE_FILE, self._state)
        log.info('"Started" component="%s" pid=%d log="%s"', name, pid, log_path)

    def _wait(self, name: str, ready: Callable[[], bool], timeout: float) -> float:
        """Polls ready() until true; fails at once, with the log's tail, when the process exits."""
        p = self._state.processes[name]
        begin = time.monotonic()
        while not ready():
            if not processes.running(p.pid, p.argv[0]):
                raise DevClusterError(f"{name} exited during start-up; {p.log} ends with:\n{_log_tail(p.log)}")
            if time.monotonic() - begin > timeout:
                raise DevClusterError(f"{name} not ready after {timeout:.0f} s; {p.log} ends with:\n"
                                      f"{_log_tail(p.log)}")
            time.sleep(_POLL_SECONDS)
        took = time.monotonic() - begin
        log.info('"Ready" component="%s" seconds=%.2f', name, took)
        return took

    def _start_apiserver(self, argv: list[str], timeout: float) -> None:
        self._start(APISERVER, argv)
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        self.apiserver_ready_seconds = self._wait(
            APISERVER, lambda: _http_ok(self.server + "/readyz", ctx, self.admin_token), timeout)

    def _stop_all(self) -> list[str]:
        stopped = []
        procs = self._processes()
        for name in reversed(ORDER):
            p = procs.get(name)
            if p is not None and processes.stop(p.pid, p.argv[0]):
                stopped.append(name)
        return stopped


def _http_ok(url: str, ctx: ssl.SSLContext | None = None, token: str | None = None) -> bool:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5, context=ctx) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False
