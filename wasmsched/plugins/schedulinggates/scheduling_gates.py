"""SchedulingGates (schedulinggates/scheduling_gates.go): PreEnqueue and EventsToRegister."""

from __future__ import annotations

from typing import Any

from wasmsched.api.types import Pod
from wasmsched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from wasmsched.framework.interface import EnqueueExtensions, PreEnqueuePlugin
from wasmsched.framework.status import Status
from wasmsched.plugins.helper.objects import as_pair

NAME = "SchedulingGates"


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        gates = pod.spec.schedulingGates
        if not gates:
            return None
        # Go formats the []string with %v: "[a b]".
        names = " ".join(g.name for g in gates)
        return Status.unresolvable(f"waiting for scheduling gates: [{names}]")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # kube 1.37 registers this on the TargetPod resource (only the pod's own updates reach the
        # hint). The framework here has no TargetPod, so it registers Pod and the hint checks that
        # the update is the pod's own, as kube's hint did before TargetPod existed.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self.is_schedulable_after_update_pod_scheduling_gates_eliminated,
            )
        ]

    def is_schedulable_after_update_pod_scheduling_gates_eliminated(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        typed = as_pair(Pod, old_obj, new_obj)
        if typed is None:
            return QueueingHint.QUEUE
        modified = typed[1]
        if modified is not None and modified.metadata.uid != pod.metadata.uid:
            # An update of another pod does not ungate this one.
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE
