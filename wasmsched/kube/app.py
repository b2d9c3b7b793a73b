"""`wasmsched run`'s process: informers, the scheduler, events, leader election and serving, wired
together and started in kube-scheduler's order (cmd/kube-scheduler/app/server.go Run).

1. The event broadcaster and the secure server (health and metrics) start first.
2. The informers start and their caches sync, on every replica, leader or not, so a replica that
   becomes leader schedules at once.
3. With leader election the scheduling loop runs only while this process holds the lease; losing it
   stops scheduling at once and ends the process (kube exits so that a fresh process starts clean).
4. SIGTERM/SIGINT: stop popping pods, let in-flight binding cycles finish (bounded), release the
   lease, exit 0.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import FrameType

from wasmsched.api.kinds import RESOURCES
from wasmsched.config.types import KubeSchedulerConfiguration
from wasmsched.framework.interface import PluginFactory
from wasmsched.kube.api import REQUEST_RETRIES, REQUESTS, KubeApi
from wasmsched.kube.client_cluster import EventBroadcaster, KubeCluster
from wasmsched.kube.informer import InformerFactory
from wasmsched.metrics.metrics import SchedulerMetrics
from wasmsched.scheduler.api_calls import RELEVANCES
from wasmsched.scheduler.api_dispatcher import APIDispatcher
from wasmsched.scheduler.eventhandlers import add_all_event_handlers
from wasmsched.scheduler.factory import new_scheduler
from wasmsched.util.klog import V0

log = logging.getLogger("wasmsched.run")

# How long SIGTERM waits for binding cycles in flight before the process exits anyway.
SHUTDOWN_GRACE_SECONDS = 10.0
# How long shutdown waits for events still queued, being written or to be tried again.
EVENTS_FLUSH_SECONDS = 5.0
# The same after a lost lease, which most often means the API server could not be reached (a restart
# takes seconds): kube-scheduler exits at once and loses these events; here they wait for the server, as
# scheduling has already stopped and the lease is another's, so a slower exit holds nothing up.
EVENTS_FLUSH_LOST_LEASE_SECONDS = 20.0
# Kinds listed for the listers (preemption's PDBs, namespace selectors, PriorityClasses for snapshot
# parity) besides the ones the event handlers watch.
LISTER_KINDS = ("Namespace", "PodDisruptionBudget", "PriorityClass", "Service", "ReplicationController",
                "ReplicaSet", "StatefulSet")


# Binding cycles that may run at once (kube: a goroutine each, unbounded): each waits on its binding's
# outcome, so they are idle threads; API_CALL_PARALLELISM requests are what is in flight. More is slower
# here: with 512 writes in flight a 2,000-pod backlog drained at 0.6x the speed, on thread wake-ups.
BINDING_WORKERS = 256
API_CALL_PARALLELISM = 64


class SchedulerApp:
    def __init__(self, cfg: KubeSchedulerConfiguration, registry: Mapping[str, PluginFactory], api: KubeApi,
                 stop: threading.Event | None = None) -> None:
        self.cfg = cfg
        self.api = api
        self.informers = InformerFactory(api)
        # Events get their own client, with its own rate limit, as kube-scheduler's event client does:
        # a burst of events never delays a binding.
        self.events = EventBroadcaster(KubeApi(api.configuration, api.connection))
        profiles = frozenset(p.scheduler_name for p in cfg.profiles)
        self.metrics = SchedulerMetrics()
        # Bindings and status patches leave the scheduling path through the API dispatcher (kube 1.37's
        # SchedulerAsyncAPICalls), many in flight at once.
        self.dispatcher = APIDispatcher(RELEVANCES, parallelism=API_CALL_PARALLELISM, metrics=self.metrics)
        self.cluster = KubeCluster(api, self.informers, self.events, profiles, self.dispatcher)
        self.scheduler = new_scheduler(cfg, registry, self.cluster, self.cluster, time.monotonic,
                                       seed=int.from_bytes(os.urandom(4), "big"), metrics=self.metrics,
                                       binding_workers=BINDING_WORKERS)
        add_all_event_handlers(self.scheduler, self.informers)
        self.metrics.watch_informers(self.informers)
        self.metrics.watch_requests(REQUESTS, REQUEST_RETRIES)
        self.metrics.watch_process()
        # A deleted pod's record (attempts, last message) is dropped: `simulate` reports on deleted pods at
        # its end, `run` never does, and kept they grew by one per pod ever scheduled (bench/soak_cluster.py).
        self.informers.watch("Pod", None, None, self.scheduler.records.forget)
        # The resources plugins declared they watch (args.watch, CRDs among them): a dynamic informer each,
        # feeding the scheduler's watched objects, whose changes are cluster events (framework/watched.py).
        for gvr in self.scheduler.watched.declared():
            self.informers.watch_resource(gvr, self.scheduler.watched)
        for kind in LISTER_KINDS:
            if RESOURCES[kind].available():
                self.informers.informer(kind)
        self.lost_lease = False
        self.stop = stop or threading.Event()  # the whole process is shutting down (set by SIGTERM)
        self._loop_thread: threading.Thread | None = None
        self._loop_stop = threading.Event()
        self._loop_lock = threading.Lock()
        # The gc hook that start_informers installs (freeze_full_collection_survivors), removed at shutdown.
        self._stop_freezing: Callable[[], None] | None = None

    # ----- health ----------------------------------------------------------------------------

    def caches_synced(self) -> str | None:
        """None when every informer listed once (readyz's sched-handler-sync)."""
        pending = [inf.kind for inf in self.informers.all_informers() if not inf.has_synced()]
        return None if not pending else f"caches not synced: {', '.join(sorted(pending))}"

    # ----- lifecycle -------------------------------------------------------------------------

    def start_informers(self, sync_timeout: float | None = None) -> bool:
        """Starts the informers and waits for their first lists; False when stopped before. Raises
        WatchStartupError when a watched resource (args.watch) cannot be listed (403, 404)."""
        self.events.start()
        self.dispatcher.run()
        self.informers.start(self.stop)
        # client-go's WaitForNamedCacheSync lines, at V(0) as there.
        log.log(V0, '"Waiting for caches to sync" kinds=%d', len(self.informers.all_informers()))
        ok = self.informers.wait_for_cache_sync(self.stop, sync_timeout)
        if ok:
            log.log(V0, '"Caches are synced" kinds=%d', len(self.informers.all_informers()))
            # What was built until now (the caches' objects, the plugins, the modules) lives as long as the
            # process: full collections need not scan it again (each took up to ~40 ms, a p99 latency spike).
            gc.freeze()
            if self._stop_freezing is None:
                self._stop_freezing = freeze_full_collection_survivors()
        return ok

    def start_scheduling(self) -> None:
        """The scheduling loop, on its own thread (OnStartedLeading)."""
        # Under the lock: a SIGTERM's stop_scheduling on the main thread may come while the elector's thread
        # is here, and must see either no thread or a started one (joining an unstarted one raises).
        with self._loop_lock:
            if self._loop_thread is not None or self._loop_stop.is_set():
                return
            thread = threading.Thread(target=self._loop, name="schedule-one", daemon=True)
            thread.start()
            self._loop_thread = thread

    def _loop(self) -> None:
        try:
            self.scheduler.run(self._loop_stop)
        except Exception:
            log.exception('"Scheduling loop failed"')
            self.stop.set()

    def stop_scheduling(self) -> None:
        """No pod is popped after this returns (the cycle in progress finishes first)."""
        with self._loop_lock:
            self._loop_stop.set()
            thread = self._loop_thread
        self.scheduler.queue.close()
        if thread is not None:
            thread.join(SHUTDOWN_GRACE_SECONDS)

    def wait_for_bindings(self) -> None:
        if not self.scheduler.wait_for_bindings(SHUTDOWN_GRACE_SECONDS):
            log.warning('"Binding cycles still running at shutdown" count=%d', self.scheduler.bindings_in_flight())

    def shutdown(self) -> None:
        """Stops scheduling, waits (bounded) for binding cycles in flight, stops informers and events."""
        self.stop.set()
        self.stop_scheduling()
        self.wait_for_bindings()
        self.scheduler.close()
        # Status patches still queued are written (bounded) before the process ends.
        self.dispatcher.close(SHUTDOWN_GRACE_SECONDS)
        self.informers.stop()
        self.events.stop(EVENTS_FLUSH_LOST_LEASE_SECONDS if self.lost_lease else EVENTS_FLUSH_SECONDS)
        self.events.api.close()
        if self._stop_freezing is not None:
            self._stop_freezing()
            self._stop_freezing = None


def freeze_full_collection_survivors() -> Callable[[], None]:
    """After every full collection, gc.freeze() what survived it, so that the next one scans only what was
    allocated since (returns the function that stops this).

    Without it each full collection scans every object made since start-up, and in `run` they found nothing
    to collect while taking longer as the caches grew (31, 78, 99, 162 ms over a minute at 100 pods/s, each
    a latency spike); with it they took 36, 48 and 10 ms. Frozen objects are still freed by reference
    counting; only a reference cycle formed among them after they were frozen would never be collected,
    and the scheduler's objects form none (a full collection after scheduling and deleting thousands of
    pods finds nothing)."""

    def freeze_survivors(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            gc.freeze()

    gc.callbacks.append(freeze_survivors)
    return lambda: gc.callbacks.remove(freeze_survivors)


def install_signal_handlers(stop: threading.Event, pending: Sequence[int] = ()) -> None:
    """SIGTERM and SIGINT end the process cleanly: the main thread sees `stop` and shuts down. `pending`:
    signals that came before (held while the process started), handled now."""

    def handle(signum: int, _frame: FrameType | None) -> None:
        log.info('"Received signal; shutting down" signal="%s"', signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    for signum in pending:
        handle(signum, None)
