"""The per-profile framework (framework/runtime/framework.go): built from a profile's configuration, it is
the Handle its plugins receive and runs them at each extension point in kube-scheduler's order and with its
semantics. The runners of the extension points are in the modules beside this one, one per phase."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec

from wasmsched.api.gvr import GroupVersionResource
from wasmsched.api.types import Pod
from wasmsched.framework import interface as fw
from wasmsched.framework.interface import (
    ClusterClient,
    EventRecorder,
    PluginFactory,
    PodActivator,
    PodLister,
    PodNominator,
)
from wasmsched.framework.pod_index import PodIndex
from wasmsched.framework.runtime.binding import BindingRunners
from wasmsched.framework.runtime.enqueue import EnqueueRunners
from wasmsched.framework.runtime.filter import FilterRunners
from wasmsched.framework.runtime.plugin_timer import PluginTimer
from wasmsched.framework.runtime.profile import ProfilePlugins, build_profile
from wasmsched.framework.runtime.score import ScoreRunners
from wasmsched.framework.runtime.waiting_pods import WaitingPodImpl, WaitingPodsMap
from wasmsched.framework.snapshot import Snapshot
from wasmsched.framework.watched import WatchedObjects, WatchedObjectStore

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics


P = ParamSpec("P")


class Framework(EnqueueRunners, FilterRunners, ScoreRunners, BindingRunners):
    """Runs one profile's plugins. Also the Handle plugins receive."""

    def __init__(
        self,
        profile_name: str,
        plugins: ProfilePlugins,
        plugin_args: Mapping[str, Any],
        registry: Mapping[str, PluginFactory],
        *,
        client: ClusterClient,
        event_recorder: EventRecorder,
        snapshot: Callable[[], Snapshot],
        pod_nominator: PodNominator,
        clock: Callable[[], float],
        percentage_of_nodes_to_score: int | None = None,
        metrics: SchedulerMetrics | None = None,
        watched: WatchedObjectStore | None = None,
        pod_activator: PodActivator | None = None,
        pod_lister: PodLister | None = None,
    ) -> None:
        """`watched`: the scheduler's store of watched objects, shared by its profiles (None: a store of
        the framework's own, which no backend fills). `pod_activator`: the scheduling queue (None: a
        framework without one, in unit tests, has nothing to activate). `pod_lister`: the scheduler's pod
        index (None: a framework of its own, which nothing fills)."""
        self._pod_activator = pod_activator
        self._pod_lister: PodLister = pod_lister if pod_lister is not None else PodIndex()
        self._profile_name = profile_name
        self._watched = watched if watched is not None else WatchedObjectStore()
        self._metrics = metrics
        self.timer = PluginTimer(metrics)
        self._client = client
        self._event_recorder = event_recorder
        self._snapshot = snapshot
        self._pod_nominator = pod_nominator
        self.clock = clock
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.waiting_pods = WaitingPodsMap()
        profile = build_profile(profile_name, plugins, plugin_args, registry, self)
        self.plugins_map = profile.plugins_map
        self.plugins = profile.plugins
        self.score_plugin_weight = profile.score_plugin_weight
        self.enqueue_extensions = profile.enqueue_extensions
        self._hooks = profile.hooks

    # ----- Handle -------------------------------------------------------------------------------

    def scheduler_metrics(self) -> SchedulerMetrics | None:
        return self._metrics

    def profile_name(self) -> str:
        return self._profile_name

    def watched_objects(self, watch: Sequence[GroupVersionResource]) -> WatchedObjects:
        return self._watched.declare(watch)

    def snapshot_shared_lister(self) -> Snapshot:
        return self._snapshot()

    def client(self) -> ClusterClient:
        return self._client

    def event_recorder(self) -> EventRecorder:
        return self._event_recorder

    def pod_nominator(self) -> PodNominator:
        return self._pod_nominator

    def activate(self, pods: Iterable[Pod]) -> None:
        if self._pod_activator is not None:
            self._pod_activator.activate(pods)

    def pod_lister(self) -> PodLister:
        return self._pod_lister

    def parallelize_until(self, pieces: int, fn: Callable[[int], None]) -> None:
        # Plugin work per piece is short Python; threads would only contend for the GIL.
        for i in range(pieces):
            fn(i)

    def get_waiting_pod(self, uid: str) -> WaitingPodImpl | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def iterate_over_waiting_pods(self, fn: Callable[[fw.WaitingPod], None]) -> None:
        for wp in self.waiting_pods.all():
            fn(wp)

    # ----- the framework's own hooks (interface.py; the wasm pool pins instances by these) --------

    def notify_scheduling_cycle_done(self, pod: Pod, succeeded: bool) -> None:
        for pl in self._hooks.scheduling_cycle_done:
            pl.scheduling_cycle_done(pod, succeeded)

    def notify_binding_cycle_done(self, pod: Pod) -> None:
        for pl in self._hooks.binding_cycle_done:
            pl.binding_cycle_done(pod)

    def notify_pod_deleted(self, pod: Pod) -> None:
        """A pod of this profile was deleted: plugins holding per-pod resources release them."""
        for pl in self._hooks.pod_deleted:
            pl.pod_deleted(pod)

    def close(self) -> None:
        for pl in self._hooks.close:
            pl.close()


def _with_init_signature(_: Callable[Concatenate[Any, P], None]) -> Callable[[Callable[..., Framework]],
                                                                      Callable[P, Framework]]:
    """Types a factory with the parameters of `__init__` (given), so they are written once."""
    return lambda factory: factory


@_with_init_signature(Framework.__init__)
def new_framework(*args: Any, **kwargs: Any) -> Framework:
    """kube's NewFramework, with Framework's parameters: with metrics, a Framework whose extension points are
    timed (instrumented.py); without, one that runs them as written."""
    if kwargs.get("metrics") is None:
        return Framework(*args, **kwargs)
    from wasmsched.framework.runtime.instrumented import InstrumentedFramework  # it extends Framework

    return InstrumentedFramework(*args, **kwargs)
