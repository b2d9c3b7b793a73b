"""CycleState: per-scheduling-cycle plugin data, as framework/cycle_state.go."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from wasmsched.framework.types import PodInfo


class StateData(Protocol):
    def clone(self) -> StateData: ...


class NotFoundError(KeyError):
    pass


class CycleState:
    """Plugins write data in PreFilter/PreScore and read it later in the same cycle.

    Preemption clones the state to simulate removing victims without touching the real cycle.
    """

    __slots__ = ("_lock", "_storage", "pod_info", "record_plugin_metrics", "skip_filter_plugins",
                 "skip_pre_bind_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._storage: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        # This cycle is one of the sampled ones whose plugin durations are observed (kube's recordPluginMetrics).
        self.record_plugin_metrics = False
        # The PodInfo of the pod being scheduled, when the scheduler knows it: its memo keeps what plugins
        # compute from the pod (plugins/helper/podmemo.py) across this pod version's cycles.
        self.pod_info: PodInfo | None = None

    def read(self, key: str) -> Any:
        try:
            return self._storage[key]
        except KeyError:
            raise NotFoundError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._storage.get(key, default)

    def write(self, key: str, value: Any) -> None:
        with self._lock:
            self._storage[key] = value

    def delete(self, key: str) -> None:
        with self._lock:
            self._storage.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState()
        for k, v in self._storage.items():
            clone = getattr(v, "clone", None)
            c._storage[k] = clone() if callable(clone) else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.record_plugin_metrics = self.record_plugin_metrics
        c.pod_info = self.pod_info
        return c
