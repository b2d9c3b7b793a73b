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
        # Only the pod's own update removing its last gate.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self.is_schedulable_after_update_target_pod_scheduling_gates_eliminated,
            )
        ]

    def is_schedulable_after_update_target_pod_scheduling_gates_eliminated(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        return QueueingHint.QUEUE
