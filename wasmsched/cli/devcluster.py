"""`wasmsched dev-cluster up|down`: a local control plane (etcd, kube-apiserver, KWOK fake nodes) in the
background, from the binaries `make kube` builds. Results go to stdout; errors to stderr."""

from __future__ import annotations

import argparse
import shlex
import time
from pathlib import Path

from wasmsched.cli import color
from wasmsched.devcluster.binaries import BIN_ENV, CACHE_ENV, BinariesMissingError

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
