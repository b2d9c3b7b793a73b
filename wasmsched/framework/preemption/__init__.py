"""Preemption: the Evaluator shared by preemption PostFilter plugins (kube's framework/preemption)."""

from wasmsched.framework.preemption.candidate import Candidate, Victims
from wasmsched.framework.preemption.executor import Executor, get_lower_priority_nominated_pods
from wasmsched.framework.preemption.preemption import (
    Evaluator,
    Interface,
    ScoreFunc,
    fit_error_message,
    pick_one_node_for_preemption,
)
from wasmsched.framework.preemption.util import (
    DisruptionBudget,
    more_important_pod,
    pod_start_time_ns,
)

__all__ = [
    "Candidate", "DisruptionBudget", "Evaluator", "Executor", "Interface", "ScoreFunc", "Victims",
    "fit_error_message", "get_lower_priority_nominated_pods", "more_important_pod",
    "pick_one_node_for_preemption", "pod_start_time_ns",
]
