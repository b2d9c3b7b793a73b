"""Informer event handlers: pods and nodes into the cache and the queue (scheduler/eventhandlers.go).

The embedded cluster (simulate) and a real API server's informers call the same handlers; nothing
behind them knows which one feeds them.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from wasmsched.api.gvr import GroupVersionResource
from wasmsched.api.quantity import kube_scaled_value, kube_value_overflows
from wasmsched.api.resources import RESOURCE_CPU
from wasmsched.api.types import Node, Pod, pod_priority
from wasmsched.framework.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    ActionType,
    ClusterEvent,
    EventResource,
)
from wasmsched.framework.pod_index import PodIndex
from wasmsched.framework.runtime import Framework
from wasmsched.framework.types import get_pod_key
from wasmsched.scheduler.cache import Cache
from wasmsched.scheduler.events import node_scheduling_properties_change, pod_scheduling_properties_change
from wasmsched.scheduler.queue import SchedulingQueue

log = logging.getLogger("wasmsched.scheduler")

# Objects besides nodes and pods whose changes plugins may register for (resource names as in events.go).
OTHER_EVENT_RESOURCES = {
    "PersistentVolume": EventResource.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": EventResource.PERSISTENT_VOLUME_CLAIM,
    "StorageClass": EventResource.STORAGE_CLASS,
    "CSINode": EventResource.CSI_NODE,
    "CSIDriver": EventResource.CSI_DRIVER,
    "CSIStorageCapacity": EventResource.CSI_STORAGE_CAPACITY,
    "VolumeAttachment": EventResource.VOLUME_ATTACHMENT,
    "ResourceClaim": EventResource.RESOURCE_CLAIM,
    "ResourceSlice": EventResource.RESOURCE_SLICE,
    "DeviceClass": EventResource.DEVICE_CLASS,
}


class EventSource(Protocol):
    """Where objects come from: registers add/update/delete callbacks for one kind (an informer)."""

    def watch(self, kind: str, on_add: Callable[[Any], None] | None,
              on_update: Callable[[Any, Any], None] | None,
              on_delete: Callable[[Any], None] | None) -> None: ...


class EventHandlers:
    """The Scheduler's handlers (a mixin: in Go these are methods of *Scheduler in eventhandlers.go)."""

    cache: Cache
    queue: SchedulingQueue
    profiles: dict[str, Framework]
    pods: PodIndex

    def responsible_for(self, pod: Pod) -> bool:
        return pod.spec.schedulerName in self.profiles

    def on_node_add(self, node: Node) -> None:
        report_out_of_range_allocatable(node)
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.NODE, ActionType.ADD), None, node)

    def on_node_update(self, old: Node, new: Node) -> None:
        if new.status.allocatable != old.status.allocatable:
            report_out_of_range_allocatable(new)
        self.cache.update_node(old, new)
        for ev in node_scheduling_properties_change(new, old):
            self.queue.move_all_to_active_or_backoff_queue(ev, old, new)

    def on_node_delete(self, node: Node) -> None:
        # kube moves pods first (plugins registered for Node/Delete, e.g. PodTopologySpread), then
        # removes the node.
        self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.NODE, ActionType.DELETE), node, None)
        self.cache.remove_node(node)

    def on_pod_add(self, pod: Pod) -> None:
        self.pods.add(pod)
        if not pod.spec.nodeName:
            if self.responsible_for(pod):
                self.queue.add(pod)
            return
        self._add_assigned_pod_to_cache(pod)

    def _add_assigned_pod_to_cache(self, pod: Pod) -> None:
        self.cache.add_pod(pod)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        self.pods.update(old, new)
        if old.spec.nodeName:
            self.cache.update_pod(old, new)
            # A bound pod cannot be the target pod.
            for ev in pod_scheduling_properties_change(new, old, False):
                self.queue.move_all_to_active_or_backoff_queue(ev, old, new)
        elif new.spec.nodeName:
            # Unassigned -> assigned (the binding landed): the pod enters the cache, and leaves the queue
            # without any other event (removal by binding, not by deletion).
            self._add_assigned_pod_to_cache(new)
            if self.responsible_for(old):
                self.queue.delete(old)
        elif self.responsible_for(old):
            self._update_pod_in_scheduling_queue(old, new)

    def _update_pod_in_scheduling_queue(self, old: Pod, new: Pod) -> None:
        # An update carrying the same object (a resync) must not schedule the pod twice. (Objects built
        # without a resourceVersion, in tests, are always updates.)
        if old.metadata.resourceVersion and old.metadata.resourceVersion == new.metadata.resourceVersion:
            return
        if self.cache.is_assumed_pod(new):
            if new.metadata.HasField("deletionTimestamp") and not old.metadata.HasField("deletionTimestamp"):
                self._handle_assumed_pod_deletion(new)
            return
        self.queue.update(old, new)
        if old.status.nominatedNodeName and old.status.nominatedNodeName != new.status.nominatedNodeName:
            # The space the pod held on its old nominated node is free again for pods of lower or equal
            # priority (hasNominatedNodeNameChanged: a nomination set or cleared, not a new one).
            prio = pod_priority(old)
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, old, None, lambda p: pod_priority(p) <= prio)

    def on_pod_delete(self, pod: Pod) -> None:
        self.pods.delete(pod)
        if pod.spec.nodeName:
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, pod, None)
            return
        if not self.responsible_for(pod):
            return
        self.queue.delete(pod)
        self.profiles[pod.spec.schedulerName].notify_pod_deleted(pod)
        if self.cache.is_assumed_pod(pod):
            self._handle_assumed_pod_deletion(pod)
            return
        if pod.status.nominatedNodeName:
            # Lower or equal priority pods counted the nominated pod as if it were assigned there.
            prio = pod_priority(pod)
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, pod, None, lambda p: pod_priority(p) <= prio)

    def _handle_assumed_pod_deletion(self, pod: Pod) -> None:
        """handleAssumedPodDeletion: an assumed pod was deleted; the others may use its resources.

        kube rejects it if it waits on Permit, else drops it from the cache at once. Here a pod past
        Permit stays assumed until its binding fails (which forgets it): the binding is short, and
        forgetting it twice would be an error.
        """
        assumed = self.cache.get_pod(pod)
        if assumed is None:
            return
        fwk = self.profiles.get(assumed.spec.schedulerName)
        if fwk is None:
            return
        fwk.reject_waiting_pod(get_pod_key(assumed))
        # The cache's copy carries the node the pod was assumed on, which the hints look at.
        self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, assumed, None)

    def on_event(self, event: ClusterEvent, old: Any = None, new: Any = None) -> None:
        """Any other object change a plugin registered for (PDBs, namespaces, storage, ...)."""
        self.queue.move_all_to_active_or_backoff_queue(event, old, new)

    def on_watched_change(self, gvr: GroupVersionResource, action: ActionType, old: Mapping[str, Any] | None,
                          new: Mapping[str, Any] | None) -> None:
        """A change of a resource a plugin declared it watches (framework/watched.py), whoever fed it: a
        cluster event named `<resource>.<version>.<group>` with the objects as parsed JSON, as
        kube-scheduler's handlers of a dynamic informer send an Add (nil, obj), Update (old, obj) or
        Delete (obj, nil) (eventhandlers.go addAllEventHandlers, buildEvtResHandler)."""
        self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(gvr.event_resource, action), old, new)


def add_all_event_handlers(handlers: EventHandlers, source: EventSource) -> None:
    """Registers the handlers for every kind the scheduler follows (addAllEventHandlers)."""
    h = handlers
    source.watch("Node", h.on_node_add, h.on_node_update, h.on_node_delete)
    source.watch("Pod", h.on_pod_add, h.on_pod_update, h.on_pod_delete)
    for kind, resource in OTHER_EVENT_RESOURCES.items():
        _watch_other(h, source, kind, resource)


def _watch_other(h: EventHandlers, source: EventSource, kind: str, resource: str) -> None:
    source.watch(
        kind,
        lambda o: h.on_event(ClusterEvent(resource, ActionType.ADD), None, o),
        lambda old, new: h.on_event(ClusterEvent(resource, ActionType.UPDATE), old, new),
        lambda o: h.on_event(ClusterEvent(resource, ActionType.DELETE), o, None),
    )


def report_out_of_range_allocatable(node: Node) -> None:
    """One line for each allocatable quantity of the node whose value is past int64 ("1e30" cpu): kube's
    Value()/MilliValue() wrap or give 0 there, and the scheduler takes the node to have what kube-scheduler
    takes it to have (api/resources.py node_allocatable), which is rarely what the node meant."""
    for name, q in node.status.allocatable.items():
        scale = -3 if name == RESOURCE_CPU else 0
        try:
            overflows = kube_value_overflows(q.string, scale)
        except ValueError:
            continue  # not a quantity: the API server does not let such a node in
        if overflows:
            _report_allocatable(node.metadata.name, name, q.string, scale)


@functools.lru_cache(maxsize=1024)
def _report_allocatable(node: str, name: str, quantity: str, scale: int) -> None:
    # Cached: a node's status updates (every heartbeat) repeat the same quantity; it is said once.
    unit = "milliValue" if scale else "value"
    log.warning('"Node allocatable quantity is past int64; taken as kube-scheduler takes it" node="%s" '
                'field="status.allocatable.%s" quantity="%s" %s=%d', node, name, quantity, unit,
                kube_scaled_value(quantity, scale))
