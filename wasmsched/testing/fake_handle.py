"""A Handle for plugin unit tests: a fixed snapshot, a recording client, no queue."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.gvr import GroupVersionResource
from wasmsched.api.types import Pod, object_key
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NominatingInfo, NominatingMode, PodCondition, WaitingPod
from wasmsched.framework.pod_index import PodIndex
from wasmsched.framework.runtime.waiting_pods import WaitingPodImpl, WaitingPodsMap
from wasmsched.framework.snapshot import Snapshot, new_snapshot
from wasmsched.framework.status import Status
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.framework.watched import WatchedObjects, WatchedObjectStore

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics


class RecordingClient:
    # Nothing reacts to its writes.
    settles_synchronously = True

    def __init__(self, pdbs: list[Any] | None = None, namespaces: Mapping[str, Mapping[str, str]] | None = None,
                 objects: list[Any] | None = None):
        self.bindings: list[tuple[str, str]] = []
        self.deleted: list[str] = []
        self.nominations: list[tuple[str, str]] = []
        self.conditions: list[tuple[str, str, str, str]] = []
        self.pdbs = pdbs or []
        self.namespaces = dict(namespaces or {})
        # Any other objects: Services, ReplicaSets, ... (list_in_namespace), PVs, claims, ... (get_object).
        self.objects = list(objects or [])
        # (kind, key, subresource) of every update_object, in order.
        self.updates: list[tuple[str, str, str]] = []

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        pod: Pod | None = self.get_object("Pod", f"{namespace}/{name}")
        return pod

    def bind(self, pod: Pod, node_name: str) -> None:
        self.bindings.append((pod.metadata.name, node_name))

    def delete_pod(self, pod: Pod, reason: str) -> None:
        self.deleted.append(pod.metadata.name)

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        self.nominations.append((pod.metadata.name, node_name))

    def set_pod_condition(self, pod: Pod, ctype: str, status: str, reason: str, message: str) -> None:
        self.conditions.append((pod.metadata.name, ctype, reason, message))

    def update_pod_status(self, pod: Pod, condition: PodCondition | None, nominating: NominatingInfo | None) -> None:
        if condition is not None:
            self.set_pod_condition(pod, condition.type, condition.status, condition.reason, condition.message)
        if nominating is not None and nominating.mode == NominatingMode.OVERRIDE:
            self.set_nominated_node_name(pod, nominating.nominated_node_name)

    def list_pod_disruption_budgets(self) -> list[Any]:
        return list(self.pdbs)

    def get_namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        return self.namespaces.get(namespace, {})

    def list_in_namespace(self, kind: str, namespace: str) -> list[Any]:
        return [o for o in self.objects if o.DESCRIPTOR.name == kind and o.metadata.namespace == namespace]

    def get_object(self, kind: str, key: str) -> Any | None:
        return next((o for o in self.objects if o.DESCRIPTOR.name == kind and object_key(o) == key), None)

    def list_objects(self, kind: str) -> list[Any]:
        return [o for o in self.objects if o.DESCRIPTOR.name == kind]

    def update_object(self, obj: Any, subresource: str = "") -> Any:
        """Replaces the stored object of the same kind and key, and records the write."""
        key = object_key(obj)
        self.updates.append((obj.DESCRIPTOR.name, key, subresource))
        self.objects = [o for o in self.objects
                        if not (o.DESCRIPTOR.name == obj.DESCRIPTOR.name and object_key(o) == key)] + [obj]
        return obj


class RecordingEvents:
    def __init__(self) -> None:
        self.events: list[tuple[Any, str, str, str]] = []

    def eventf(self, regarding: Any, related: Any, eventtype: str, reason: str, action: str, note: str) -> None:
        self.events.append((regarding, eventtype, reason, note))


class FakeHandle:
    def __init__(self, pods: list[Pod] | None = None, nodes: list[Any] | None = None,
                 snapshot: Snapshot | None = None, client: RecordingClient | None = None) -> None:
        self._snapshot = snapshot if snapshot is not None else new_snapshot(pods or [], nodes or [])
        self._client = client or RecordingClient()
        self._events = RecordingEvents()
        self.nominated: dict[str, list[PodInfo]] = {}
        self.metrics: SchedulerMetrics | None = None
        self.watched = WatchedObjectStore()
        self.clock: Callable[[], float] = time.monotonic
        self.waiting_pods = WaitingPodsMap()
        self.activated: list[str] = []  # keys of the pods activate() was given, in order

    def snapshot_shared_lister(self) -> Snapshot:
        return self._snapshot

    def client(self) -> RecordingClient:
        return self._client

    def event_recorder(self) -> RecordingEvents:
        return self._events

    def get_waiting_pod(self, uid: str) -> WaitingPodImpl | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None:
        for wp in self.waiting_pods.all():
            fn(wp)

    def activate(self, pods: Iterable[Pod]) -> None:
        self.activated.extend(object_key(p) for p in pods)

    def pod_lister(self) -> PodIndex:
        """The client's pods (RecordingClient objects), indexed as the scheduler's."""
        index = PodIndex()
        for p in self._client.list_objects("Pod"):
            index.add(p)
        return index

    def pod_nominator(self) -> FakeHandle:
        return self

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.nominated.get(node_name, []))

    def parallelize_until(self, pieces: int, fn: Callable[[int], None]) -> None:
        for i in range(pieces):
            fn(i)

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod,
                                         pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        return None

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod,
                                            pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        return None

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None:
        return None

    def profile_name(self) -> str:
        return "default-scheduler"

    def watched_objects(self, watch: Sequence[GroupVersionResource]) -> WatchedObjects:
        """A view of `self.watched`, which a test fills (`watched.apply(gvr, obj)`)."""
        return self.watched.declare(watch)

    def scheduler_metrics(self) -> SchedulerMetrics | None:
        return self.metrics
