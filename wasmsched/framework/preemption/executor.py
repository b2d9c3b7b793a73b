"""Actuates a chosen preemption candidate (kube's preemption/executor.go).

kube-scheduler can run these API calls in a goroutine (the SchedulerAsyncPreemption feature, KEP
4832) and then blocks the preemptor in PreEnqueue until they finish. wasmsched runs them inline in
the scheduling cycle, as kube's prepareCandidate does with the feature off: the preemptor is
nominated only after its victims were evicted, so no "preemption in flight" bookkeeping is needed.

A client reports a pod that no longer exists by raising LookupError (KeyError); that is treated as
kube treats apierrors.IsNotFound: the victim is already gone, which is what preemption wants.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from wasmsched.api.types import Pod, pod_priority
from wasmsched.framework.preemption.candidate import Candidate
from wasmsched.framework.preemption.util import DISRUPTION_TARGET, POD_REASON_PREEMPTION_BY_SCHEDULER
from wasmsched.framework.status import Status

if TYPE_CHECKING:
    from wasmsched.framework.interface import Handle

log = logging.getLogger(__name__)


def _condition_up_to_date(victim: Pod, message: str) -> bool:
    """Whether apipod.UpdatePodCondition would report no change, so kube skips the status patch."""
    for c in victim.status.conditions:
        if c.type == DISRUPTION_TARGET:
            return (
                c.status == "True" and c.reason == POD_REASON_PREEMPTION_BY_SCHEDULER
                and c.message == message and not c.HasField("lastProbeTime")
            )
    return False


class Executor:
    """Evicts victims and clears lower-priority nominations on the chosen node."""

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def preempt_pod(self, c: Candidate, preemptor: Pod, victim: Pod, plugin_name: str) -> None:
        """Executor.PreemptPod: raises on an API error other than not-found."""
        fh = self._handle
        event_message = f"Preempted by pod {preemptor.metadata.uid} on node {c.name}"
        # A victim waiting in Permit is rejected in memory (it goes back to the queue) instead of
        # being deleted through the API.
        if fh.reject_waiting_pod(victim.metadata.uid):
            event_message += " (in kube-scheduler memory)."
        else:
            client = fh.client()
            message = f"{preemptor.spec.schedulerName}: preempting to accommodate a higher priority pod"
            if not _condition_up_to_date(victim, message):
                try:
                    client.set_pod_condition(
                        victim, DISRUPTION_TARGET, "True", POD_REASON_PREEMPTION_BY_SCHEDULER, message
                    )
                except LookupError:
                    log.debug("victim %s is already deleted", victim.metadata.name)
                    return
            try:
                client.delete_pod(victim, POD_REASON_PREEMPTION_BY_SCHEDULER)
            except LookupError:
                log.debug("victim %s is already deleted", victim.metadata.name)
                return
        fh.event_recorder().eventf(victim, preemptor, "Normal", "Preempted", "Preempting", event_message)

    def prepare_candidate(self, c: Candidate, pod: Pod, plugin_name: str) -> Status | None:
        """Executor.prepareCandidate: evict the victims, then clear lower-priority nominations.

        kube evicts in parallel and cancels the rest on the first error; one at a time, stopping
        at the first error, is one of the outcomes that allows.
        """
        m = self._handle.scheduler_metrics()
        if m is not None:
            m.preemption_victims.observe(len(c.victims.pods))
        for victim in c.victims.pods:
            if victim.metadata.HasField("deletionTimestamp"):
                # Graceful deletion has already started; another API call is unnecessary.
                continue
            try:
                self.preempt_pod(c, pod, victim, plugin_name)
            except Exception as e:  # noqa: BLE001 - any API failure becomes an Error status
                return Status.error(e)

        # Lower-priority pods nominated to this node may no longer fit: clearing their nomination
        # moves them back to the active queue so they find another place sooner.
        client = self._handle.client()
        for p in get_lower_priority_nominated_pods(self._handle, pod, c.name):
            try:
                client.set_nominated_node_name(p, "")
            except Exception:  # not critical, as in kube
                log.exception("cannot clear 'NominatedNodeName' of pod %s", p.metadata.name)
        return None


def get_lower_priority_nominated_pods(handle: Handle, pod: Pod, node_name: str) -> list[Pod]:
    """Pods nominated to `node_name` whose priority is lower than the preemptor's."""
    pod_infos = handle.pod_nominator().nominated_pods_for_node(node_name)
    if not pod_infos:
        return []
    prio = pod_priority(pod)
    return [pi.pod for pi in pod_infos if pi.priority < prio]
