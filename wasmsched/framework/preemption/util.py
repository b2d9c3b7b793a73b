"""Pod helpers preemption needs (corev1helpers.PodPriority and pkg/scheduler/util's start-time helpers)
and PodDisruptionBudgets compiled once per preemption attempt."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from wasmsched.api.labels import Selector, compile_label_selector
from wasmsched.api.types import Pod, PodDisruptionBudget, pod_priority

# v1.DisruptionTarget and v1.PodReasonPreemptionByScheduler.
DISRUPTION_TARGET = "DisruptionTarget"
POD_REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


def pod_start_time_ns(pod: Pod, now_ns: int | None = None) -> int:
    """util.GetPodStartTime in nanoseconds: status.startTime, or now for pods not started yet."""
    if pod.status.HasField("startTime"):
        t = pod.status.startTime
        return t.seconds * 1_000_000_000 + t.nanos
    return time.time_ns() if now_ns is None else now_ns


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """util.MoreImportantPod: higher priority first, then the pod that started earlier."""
    p1, p2 = pod_priority(pod1), pod_priority(pod2)
    if p1 != p2:
        return p1 > p2
    return pod_start_time_ns(pod1) < pod_start_time_ns(pod2)


def earliest_pod_start_time_ns(pods: Sequence[Pod]) -> int | None:
    """util.GetEarliestPodStartTime: the earliest start time among the highest-priority pods."""
    if not pods:
        return None
    earliest = pod_start_time_ns(pods[0])
    max_priority = pod_priority(pods[0])
    for pod in pods:
        prio = pod_priority(pod)
        if prio == max_priority:
            earliest = min(earliest, pod_start_time_ns(pod))
        elif prio > max_priority:
            max_priority = prio
            earliest = pod_start_time_ns(pod)
    return earliest


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """podTerminatingByPreemption: being deleted, with the scheduler's DisruptionTarget condition."""
    if not pod.metadata.HasField("deletionTimestamp"):
        return False
    for c in pod.status.conditions:
        if c.type == DISRUPTION_TARGET:
            return c.status == "True" and c.reason == POD_REASON_PREEMPTION_BY_SCHEDULER
    return False


@dataclass(slots=True)
class DisruptionBudget:
    """A policy/v1 PodDisruptionBudget with its selector compiled.

    `selector` is None when the PDB can match no pod: a nil or empty selector (kube:
    "A PDB with a nil or empty selector matches nothing") or an invalid one.
    """

    namespace: str
    selector: Selector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    @classmethod
    def from_pdb(cls, pdb: PodDisruptionBudget) -> DisruptionBudget:
        selector: Selector | None = None
        spec = pdb.spec
        if spec.HasField("selector") and (spec.selector.matchLabels or spec.selector.matchExpressions):
            try:
                selector = compile_label_selector(spec.selector)
            except ValueError:
                # metav1.LabelSelectorAsSelector failed: the PDB does not match the pod.
                selector = None
        return cls(
            pdb.metadata.namespace, selector, pdb.status.disruptionsAllowed,
            frozenset(pdb.status.disruptedPods.keys()),
        )
