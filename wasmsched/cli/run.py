"""`wasmsched run`: the scheduler of a real cluster, with kube-scheduler's flags."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import logging
import threading
from pathlib import Path
from typing import Any

from wasmsched.cli import color
from wasmsched.cli.main import held_signals, version_text
from wasmsched.cli.simulate import BadInput, _error_text, register_wasm_plugins
from wasmsched.config import ConfigError, load_config
from wasmsched.config.types import KubeSchedulerConfiguration
from wasmsched.framework.runtime import FrameworkError
from wasmsched.kube.api import ClientConfigError, ClientConnection, KubeApi, load_configuration
from wasmsched.kube.app import SchedulerApp, install_signal_handlers
from wasmsched.kube.informer import WatchStartupError
from wasmsched.kube.leaderelection import (
    HEALTH_CHECK_NAME,
    LeaderElectionConfig,
    LeaderElector,
    lock_client,
    new_identity,
)
from wasmsched.kube.serving import ListenError, SecureServer
from wasmsched.kube.servingcert import CertificateError
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.util.cpu_policy import use_batch_policy
from wasmsched.util.heap import Scavenger, allocator, configure_allocator
from wasmsched.util.klog import V0, quote

log = logging.getLogger("wasmsched.run")

# kube-scheduler's --secure-port default.
DEFAULT_SECURE_PORT = 10259
# How often the C heap's free pages go back to the system (util/heap.py; Go's scavenger runs about as
# often). A call costs ~10 ms per 70 MiB returned, off the GIL, and microseconds when there is none.
HEAP_SCAVENGE_SECONDS = 10.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="a KubeSchedulerConfiguration file (the same one `simulate` takes)")
    p.add_argument("--kubeconfig", default="", help="kubeconfig file (overrides clientConnection.kubeconfig); "
                   "neither it nor --master: in-cluster configuration")
    p.add_argument("--master", default="", help="the API server's address (overrides the kubeconfig's)")
    le = p.add_argument_group("leader election (override the config file's leaderElection)")
    le.add_argument("--leader-elect", type=_bool, metavar="BOOL", default=None,
                    help="run leader election before scheduling (default true)")
    le.add_argument("--leader-elect-lease-duration", metavar="DURATION", default=None)
    le.add_argument("--leader-elect-renew-deadline", metavar="DURATION", default=None)
    le.add_argument("--leader-elect-retry-period", metavar="DURATION", default=None)
    le.add_argument("--leader-elect-resource-lock", metavar="LOCK", default=None)
    le.add_argument("--leader-elect-resource-name", metavar="NAME", default=None)
    le.add_argument("--leader-elect-resource-namespace", metavar="NAMESPACE", default=None)
    sv = p.add_argument_group("secure serving: /healthz /livez /readyz /metrics")
    sv.add_argument("--bind-address", default="127.0.0.1",
                    help="the address to serve on (default 127.0.0.1; kube-scheduler's is 0.0.0.0, "
                    "a Deployment whose probes reach the pod's IP sets 0.0.0.0)")
    sv.add_argument("--secure-port", type=int, default=DEFAULT_SECURE_PORT,
                    help=f"HTTPS port (default {DEFAULT_SECURE_PORT}); 0 disables serving")
    sv.add_argument("--tls-cert-file", default="", help="serving certificate (default: self-signed)")
    sv.add_argument("--tls-private-key-file", default="")
    sv.add_argument("--cert-dir", default="", help="where the self-signed certificate is kept")
    p.add_argument("-v", "--v", type=int, dest="verbosity", default=argparse.SUPPRESS,
                   help="log verbosity on stderr (0: warnings and kube-scheduler's V(0) lines: start-up, "
                   "serving, leader election; 2: info such as bindings; 5: debug)")
    p.set_defaults(func=run, stops_on_sigterm=True)


def _bool(text: str) -> bool:
    low = text.lower()
    if low in ("true", "1", "t", "yes"):
        return True
    if low in ("false", "0", "f", "no"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {text!r}")


def leader_election_dict(cfg: KubeSchedulerConfiguration, args: argparse.Namespace) -> dict[str, Any]:
    """The config file's leaderElection with the --leader-elect* flags on top (kube's precedence)."""
    d = dict(cfg.leader_election)
    flags = {"leaderElect": args.leader_elect, "leaseDuration": args.leader_elect_lease_duration,
             "renewDeadline": args.leader_elect_renew_deadline, "retryPeriod": args.leader_elect_retry_period,
             "resourceLock": args.leader_elect_resource_lock, "resourceName": args.leader_elect_resource_name,
             "resourceNamespace": args.leader_elect_resource_namespace}
    d.update({k: v for k, v in flags.items() if v is not None})
    return d


def _load(args: argparse.Namespace) -> KubeSchedulerConfiguration:
    try:
        return load_config(args.config)
    except ConfigError as e:
        raise BadInput(str(e)) from e
    except OSError as e:
        raise BadInput(f"{args.config}: {e.strerror}") from e


def check_serving_flags(args: argparse.Namespace) -> None:
    """SecureServingOptions.Validate: the port's range; and the bind address must be an IP."""
    if not 0 <= args.secure_port <= 65535:
        raise BadInput(f"--secure-port {args.secure_port} must be between 0 and 65535, inclusive. "
                       "0 for turning off secure port")
    try:
        ipaddress.ip_address(args.bind_address)
    except ValueError:
        raise BadInput(f"--bind-address {args.bind_address}: not an IP address") from None


def serving_error(args: argparse.Namespace, e: ListenError | CertificateError) -> str:
    """One line naming the flag to change: the port is taken or refused, the address is not this
    host's, or a certificate flag names a file that cannot be used."""
    if isinstance(e, CertificateError):
        if args.tls_cert_file or args.tls_private_key_file:
            return f"--tls-cert-file/--tls-private-key-file: {e}"
        return f"--cert-dir {args.cert_dir}: {e}"
    if e.errno == errno.EADDRINUSE:
        return f"--secure-port {args.secure_port}: address {e.address} is already in use"
    if e.errno == errno.EACCES:
        return f"--secure-port {args.secure_port}: not allowed to listen on {e.address} ({e.reason})"
    if e.errno == errno.EADDRNOTAVAIL:
        return f"--bind-address {args.bind_address}: not an address of this host ({e.reason})"
    return f"--bind-address {args.bind_address} --secure-port {args.secure_port}: {e}"


def build(args: argparse.Namespace, cfg: KubeSchedulerConfiguration, stop: threading.Event) -> SchedulerApp:
    connection = ClientConnection.from_dict(cfg.client_connection)
    kubeconfig = args.kubeconfig or connection.kubeconfig
    try:
        api = KubeApi(load_configuration(kubeconfig, args.master), connection)
    except ClientConfigError as e:
        raise BadInput(str(e)) from e
    registry = in_tree_registry()
    try:
        register_wasm_plugins(registry, cfg, Path(args.config).absolute().parent if args.config else None)
    except ValueError as e:
        raise BadInput(f"{args.config}: {e}") from e
    try:
        app = SchedulerApp(cfg, registry, api, stop)
    except FrameworkError as e:
        raise BadInput(f"{args.config + ': ' if args.config else ''}{e}") from e
    return app


def run(args: argparse.Namespace) -> int:
    # First, so that a SIGTERM while the configuration loads and the guests compile is a clean stop too.
    stop = threading.Event()
    install_signal_handlers(stop, held_signals())
    # Before any thread allocates (the informers, the dispatcher, the binding cycles).
    settings = configure_allocator()
    log.info('"Memory allocator" allocator="%s" settings="%s"', allocator(), " ".join(settings))
    # Before the threads start too, so that they inherit it (util/cpu_policy.py).
    log.info('"CPU scheduling policy" policy="%s"', use_batch_policy())
    try:
        check_serving_flags(args)
        cfg = _load(args)
        le = LeaderElectionConfig.from_dict(leader_election_dict(cfg, args))
        app = build(args, cfg, stop)
    except ConfigError as e:  # leaderElection after the --leader-elect* flags
        color.error(f"{args.config or 'flags'}: {e}")
        return 2
    except BadInput as e:
        color.error(f"{_error_text(str(e))}")
        return 2
    elector = _elector(app, le) if le.leader_elect else None
    server = None
    try:
        if args.secure_port:
            # As kube-scheduler, the port is opened (and the certificate made) before Run starts.
            try:
                server = _secure_server(args, app, elector)
            except (ListenError, CertificateError) as e:
                color.error(f"{serving_error(args, e)}")
                return 2
        # kube-scheduler's first line in Run (V(0)), with what this one schedules and where.
        log.log(V0, '"Starting Kubernetes Scheduler" version=%s server="%s" profiles="%s" leaderElect=%s',
                quote(version_text()), app.api.host, ",".join(p.scheduler_name for p in cfg.profiles),
                str(le.leader_elect).lower())
        if server is not None:
            server.start()
        return _serve(app, elector)
    except WatchStartupError as e:
        color.error(f"{e}")
        return 2
    except OSError as e:
        color.error(f"{e}")
        return 1
    finally:
        app.shutdown()
        if server is not None:
            server.shutdown()
        app.api.close()


def _secure_server(args: argparse.Namespace, app: SchedulerApp, elector: LeaderElector | None) -> SecureServer:
    """kube-scheduler's checks: ping everywhere; the leader election watchdog on healthz and livez;
    readyz also waits for the informers' caches (sched-handler-sync). A request without a token is
    refused with 401 (kube-scheduler lets it through as system:anonymous, whom RBAC then refuses: 403)."""
    health: dict[str, Any] = {}
    if elector is not None:
        health[HEALTH_CHECK_NAME] = elector.check
    ready = {**health, "sched-handler-sync": app.caches_synced}
    return SecureServer(args.bind_address, args.secure_port, app.api, app.metrics.registry,
                        {"healthz": health, "livez": health, "readyz": ready},
                        cert_file=args.tls_cert_file or None, key_file=args.tls_private_key_file or None,
                        cert_dir=args.cert_dir or None, anonymous=False)


def _elector(app: SchedulerApp, le: LeaderElectionConfig) -> LeaderElector:
    def started(leading_ended: threading.Event) -> None:
        app.start_scheduling()
        leading_ended.wait()
        if not app.stop.is_set():
            # kube-scheduler exits so that a fresh process starts clean (its caches may hold assumed pods).
            log.error('"Leaderelection lost"')
            app.lost_lease = True
            app.stop_scheduling()
            app.stop.set()

    return LeaderElector(lock_client(app.api), le, new_identity(), started, lambda: None)


def _serve(app: SchedulerApp, elector: LeaderElector | None) -> int:
    stop = app.stop
    if not app.start_informers():
        return 0  # stopped before the caches synced
    elector_stop = threading.Event()
    elector_thread = None
    if elector is None:
        app.start_scheduling()
    else:
        elector_thread = threading.Thread(target=elector.run, args=(elector_stop,), name="leader-election",
                                          daemon=True)
        elector_thread.start()
    scavenger = Scavenger(HEAP_SCAVENGE_SECONDS)
    while not stop.wait(0.5):
        if elector_thread is not None and not elector_thread.is_alive():
            break
        scavenger.poll()
    # Scheduling stops and bindings in flight finish before the lease is released, so the next leader
    # never overlaps with this one.
    app.stop_scheduling()
    app.wait_for_bindings()
    if elector_thread is not None:
        elector_stop.set()
        elector_thread.join(10.0)
    if app.lost_lease:
        return 1
    log.info('"Scheduler stopped"')
    return 0
