"""The queue's extension points: PreEnqueue, QueueSort and the events each plugin registers
(framework/runtime/framework.go's RunPreEnqueuePlugins, QueueSortFunc and EventsToRegister)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from wasmsched.api.types import Pod
from wasmsched.framework import interface as fw
from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from wasmsched.framework.runtime.profile import PluginLists
from wasmsched.framework.status import Status, is_rejected, not_success
from wasmsched.framework.types import QueuedPodInfo

log = logging.getLogger("wasmsched.framework")

# framework.UnrollWildCardResource: the events of a plugin without EnqueueExtensions (every resource
# with every action; kube 1.37 leaves out ResourceSlice, and PodGroup unless GenericWorkload is on).
ALL_CLUSTER_EVENTS = [
    ClusterEvent(r, ActionType.ALL)
    for r in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD,
              EventResource.NODE, EventResource.PERSISTENT_VOLUME, EventResource.PERSISTENT_VOLUME_CLAIM,
              EventResource.CSI_NODE, EventResource.CSI_DRIVER, EventResource.CSI_STORAGE_CAPACITY,
              EventResource.STORAGE_CLASS, EventResource.RESOURCE_CLAIM, EventResource.DEVICE_CLASS)
]


class EnqueueRunners:
    """The Framework's queue-side extension points."""

    plugins: PluginLists

    def queue_sort_less(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        return self.plugins.queue_sort[0].less

    def queue_sort_key(self) -> fw.QueueSortKey | None:
        """The QueueSort plugin, when it also orders by a key (interface.QueueSortKey)."""
        pl = self.plugins.queue_sort[0]
        return pl if isinstance(pl, fw.QueueSortKey) else None

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        for pl in self.plugins.pre_enqueue:
            st = pl.pre_enqueue(pod)
            if not_success(st):
                st.plugin = pl.name
                if not is_rejected(st):
                    log.error("running PreEnqueue plugin %s: %s", pl.name, st.message())
                return st
        return None

    def events_to_register(self) -> list[tuple[str, ClusterEventWithHint]]:
        """(plugin, event) pairs for the queue. A plugin that can reject pods (PreEnqueue, PreFilter,
        Filter, Reserve, Permit) without EnqueueExtensions is registered for every event, as kube's
        defaultEnqueueExtension, since nothing says which events could help it."""
        out: list[tuple[str, ClusterEventWithHint]] = []
        seen: set[str] = set()
        p = self.plugins
        rejecting: list[fw.Plugin] = [*p.pre_enqueue, *p.pre_filter, *p.filter, *p.reserve, *p.permit]
        for pl in rejecting:
            if pl.name in seen:
                continue
            seen.add(pl.name)
            if not isinstance(pl, fw.EnqueueExtensions):
                out.extend((pl.name, ClusterEventWithHint(ev)) for ev in ALL_CLUSTER_EVENTS)
                continue
            try:
                events = pl.events_to_register()
            except Exception as e:
                log.error("plugin %s: EventsToRegister failed: %s", pl.name, e)
                out.extend((pl.name, ClusterEventWithHint(ev)) for ev in ALL_CLUSTER_EVENTS)
                continue
            out.extend((pl.name, ev) for ev in events)
        return out
