"""`wasmsched dev-cluster up|down`: a local control plane (etcd, kube-apiserver, KWOK fake nodes) in the
background, from the binaries `make kube` builds; and its faults, to try a scheduler against: `restart-apiserver`,
`stop-etcd`/`continue-etcd`, and `proxy` (network faults between a client and kube-apiserver). Results go to
stdout; errors to stderr."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from wasmsched.cli import color
from wasmsched.devcluster.binaries import BIN_ENV, CACHE_ENV, BinariesMissingError

if TYPE_CHECKING:
    from wasmsched.devcluster.cluster import DevCluster

# `./.dev-cluster` (wasmsched/devcluster/cluster.py DEFAULT_DIR, which is not imported here: it loads the
# kubernetes client, which other commands do not need).
DEFAULT_DIR = Path(".dev-cluster")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (f"A local control plane on 127.0.0.1: etcd, kube-apiserver (RBAC, static tokens), "
                     f"kube-controller-manager (the PV and resourceclaim controllers, the host-path provisioner) "
                     f"and KWOK (nodes with the kwok.x-k8s.io/node=fake annotation become Ready, their pods Running). "
                     f"Binaries: ${BIN_ENV}, else ${CACHE_ENV}/<version>/bin (`make kube` builds them).")
    cmds = p.add_subparsers(dest="dev_cluster_command", required=True)
    dir_help = f"the cluster's directory: state, kubeconfig, certificates, data, logs (default ./{DEFAULT_DIR})"
    up = cmds.add_parser("up", help="start a cluster in the background and wait until it is ready")
    up.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=dir_help)
    up.add_argument("--nodes", type=int, default=0, help="KWOK nodes to create (cpu 32, memory 256Gi, pods 110)")
    up.add_argument("--apiserver-arg", action="append", default=[], metavar="--FLAG=VALUE",
                    help="an extra kube-apiserver flag (repeatable; wins over the defaults)")
    up.set_defaults(func=run_up)
    down = cmds.add_parser("down", help="stop the cluster's processes and remove its files")
    down.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=dir_help)
    down.set_defaults(func=run_down)
    restart = cmds.add_parser("restart-apiserver", help="stop kube-apiserver and start it again (same port and "
                              "data: every watch and connection is cut), wait until it is ready")
    restart.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=dir_help)
    restart.set_defaults(func=run_restart_apiserver)
    stop = cmds.add_parser("stop-etcd", help="SIGSTOP etcd: it keeps its connections and answers nothing "
                           "(kube-apiserver's requests time out) until continue-etcd")
    stop.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=dir_help)
    stop.set_defaults(func=run_stop_etcd)
    cont = cmds.add_parser("continue-etcd", help="SIGCONT a stopped etcd")
    cont.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=dir_help)
    cont.set_defaults(func=run_continue_etcd)
    proxy = cmds.add_parser(
        "proxy", help="run a TCP proxy on 127.0.0.1 in front of kube-apiserver that injects network faults, "
        "until interrupted; writes DIR/proxy.kubeconfig pointing at it",
        description="A TCP proxy on 127.0.0.1 in front of the dev cluster's kube-apiserver (TLS passes through). "
                    "Point a client at DIR/proxy.kubeconfig. While it runs: SIGUSR1 resets every current "
                    "connection, SIGUSR2 turns the black hole on or off (connections kept open, nothing "
                    "forwarded: a partition). Ctrl-C or SIGTERM ends it.")
    proxy.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=dir_help)
    proxy.add_argument("--port", type=int, default=0, help="the port to listen on (default: any free one)")
    proxy.add_argument("--latency", type=float, default=0.0, metavar="SECONDS",
                       help="added to every round trip (half each way)")
    proxy.add_argument("--reset-fraction", type=float, default=0.0, metavar="F",
                       help="the share of new connections reset (RST): at once, or within --reset-within")
    proxy.add_argument("--reset-within", type=float, default=0.0, metavar="SECONDS",
                       help="reset a connection picked by --reset-fraction at a random moment this soon "
                            "after it opened (a connection that dies in use)")
    proxy.add_argument("--drop-fraction", type=float, default=0.0, metavar="F",
                       help="the share of new connections closed at once (FIN)")
    proxy.add_argument("--seed", type=int, default=None, help="the faults' random seed")
    proxy.set_defaults(func=run_proxy)


def run_up(args: argparse.Namespace) -> int:
    if args.nodes < 0:
        color.error(f"--nodes must be >= 0, got {args.nodes}")
        return 2
    from wasmsched.devcluster.cluster import DevCluster, DevClusterError

    begin = time.monotonic()
    try:
        cluster = DevCluster.up(args.dir, nodes=args.nodes, apiserver_args=args.apiserver_arg)
    except BinariesMissingError as e:
        color.error(f"{e}")
        return 2
    except (DevClusterError, TimeoutError, OSError) as e:
        color.error(f"dev cluster in {args.dir} did not start: {e}")
        return 1
    pids = " ".join(f"{name}={pid}" for name, pid in cluster.pids.items())
    print(f"dev cluster up in {time.monotonic() - begin:.1f} s "
          f"(kube-apiserver ready in {cluster.apiserver_ready_seconds:.1f} s): {cluster.server}")
    print(f"directory: {cluster.directory}")
    print(f"processes: {pids} (logs in {cluster.log_dir})")
    if args.nodes:
        print(f"nodes: {args.nodes} KWOK nodes (kwok-node-0..{args.nodes - 1})")
    print("use it:")
    print(f"  export KUBECONFIG={cluster.kubeconfig}")
    print(f'  wasmsched run --kubeconfig "$KUBECONFIG" --cert-dir {shlex.quote(str(cluster.scheduler_cert_dir))}')
    print("read the scheduler's /metrics (user metrics-reader, group system:monitoring; the CA of the "
          "certificate run made in --cert-dir):")
    print(f"  curl --cacert {shlex.quote(str(cluster.scheduler_ca_file))} "
          f'-H "Authorization: Bearer $(cat {shlex.quote(str(cluster.metrics_token_file))})" '
          f"https://127.0.0.1:10259/metrics")
    print(f"stop it:\n  wasmsched dev-cluster down --dir {cluster.directory}")
    return 0


def run_down(args: argparse.Namespace) -> int:
    from wasmsched.devcluster.cluster import DevCluster, DevClusterError

    begin = time.monotonic()
    try:
        cluster = DevCluster.load(args.dir)
    except DevClusterError as e:
        print(f"nothing to do: {e}")
        return 0
    stopped = cluster.down()
    took = time.monotonic() - begin
    what = f"stopped {', '.join(stopped)}" if stopped else "no process was running"
    print(f"dev cluster down in {took:.1f} s: {what}; removed its files from {cluster.directory}")
    return 0


def _load(directory: Path) -> DevCluster | None:
    """The dev cluster in DIR, or None after one line saying there is none."""
    from wasmsched.devcluster.cluster import DevCluster, DevClusterError

    try:
        return DevCluster.load(directory)
    except DevClusterError as e:
        color.error(f"{e}; start one with `wasmsched dev-cluster up --dir {directory}`")
        return None


def _running(cluster: DevCluster, name: str) -> bool:
    if name in cluster.running():
        return True
    color.error(f"{name} of the dev cluster in {cluster.directory} is not running; "
                f"`wasmsched dev-cluster down --dir {cluster.directory}` and `up` start it afresh")
    return False


def run_restart_apiserver(args: argparse.Namespace) -> int:
    from wasmsched.devcluster.cluster import APISERVER, DevClusterError

    cluster = _load(args.dir)
    if cluster is None:
        return 2
    begin = time.monotonic()
    try:
        cluster.restart_apiserver()
    except DevClusterError as e:
        color.error(f"kube-apiserver did not come back: {e}")
        return 1
    print(f"kube-apiserver restarted in {time.monotonic() - begin:.1f} s "
          f"(pid {cluster.pids[APISERVER]}, ready in {cluster.apiserver_ready_seconds:.1f} s): {cluster.server}")
    return 0


def run_stop_etcd(args: argparse.Namespace) -> int:
    return _signal_etcd(args, stop=True)


def run_continue_etcd(args: argparse.Namespace) -> int:
    return _signal_etcd(args, stop=False)


def _signal_etcd(args: argparse.Namespace, *, stop: bool) -> int:
    from wasmsched.devcluster.cluster import ETCD

    cluster = _load(args.dir)
    if cluster is None or not _running(cluster, ETCD):
        return 2
    pid = cluster.pids[ETCD]
    if stop:
        cluster.stop_etcd()
        print(f"etcd stopped (SIGSTOP, pid {pid}): kube-apiserver's requests to it wait until "
              f"`wasmsched dev-cluster continue-etcd --dir {cluster.directory}`")
    else:
        cluster.continue_etcd()
        print(f"etcd continued (SIGCONT, pid {pid})")
    return 0


def run_proxy(args: argparse.Namespace) -> int:
    for flag, value in (("--reset-fraction", args.reset_fraction), ("--drop-fraction", args.drop_fraction)):
        if not 0.0 <= value <= 1.0:
            color.error(f"{flag} must be between 0 and 1, got {value}")
            return 2
    for flag, value in (("--latency", args.latency), ("--reset-within", args.reset_within)):
        if value < 0:
            color.error(f"{flag} must be >= 0, got {value}")
            return 2
    if args.reset_fraction + args.drop_fraction > 1.0:
        color.error("--reset-fraction and --drop-fraction add up to more than 1")
        return 2
    if not 0 <= args.port <= 65535:
        color.error(f"--port must be between 0 and 65535, got {args.port}")
        return 2
    from wasmsched.devcluster.faultproxy import FaultProxy

    cluster = _load(args.dir)
    if cluster is None:
        return 2
    hostport = cluster.server.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    try:
        proxy = FaultProxy((host, int(port)), port=args.port, seed=args.seed)
    except OSError as e:
        color.error(f"--port {args.port}: {e.strerror or e}")
        return 2
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        if signum == signal.SIGUSR1:
            n = proxy.cut()
            print(f"reset {n} connections", flush=True)
        elif signum == signal.SIGUSR2:
            proxy.blackhole = not proxy.blackhole
            print(f"black hole {'on' if proxy.blackhole else 'off'}", flush=True)
        else:
            stop.set()

    with proxy:
        proxy.latency = args.latency
        proxy.reset_fraction = args.reset_fraction
        proxy.reset_within = args.reset_within
        proxy.drop_fraction = args.drop_fraction
        kubeconfig = cluster.write_proxy_kubeconfig(proxy.url)
        for signum in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, on_signal)
        print(f"proxy {proxy.url} -> {cluster.server} (latency {args.latency:g} s, reset {args.reset_fraction:g}"
              f"{f' within {args.reset_within:g} s' if args.reset_within else ''}, drop {args.drop_fraction:g})")
        print("use it:")
        print(f"  wasmsched run --kubeconfig {shlex.quote(str(kubeconfig))} ...")
        print("faults while it runs (Ctrl-C ends it):")
        print(f"  kill -USR1 {os.getpid()}   # reset every current connection")
        print(f"  kill -USR2 {os.getpid()}   # black hole on / off")
        print("", end="", flush=True)  # the lines reach a pipe before the wait
        while not stop.wait(1.0):
            pass
        kubeconfig.unlink(missing_ok=True)
        st = proxy.stats
    print(f"proxy stopped: {st.accepted} connections accepted, {st.reset} reset, {st.dropped} dropped, "
          f"{st.cut} cut")
    return 0
