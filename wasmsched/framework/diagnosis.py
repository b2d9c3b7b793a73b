"""Diagnosis and FitError: why no node fits a pod, and kube-scheduler's text for it
(framework/types.go)."""

from __future__ import annotations

from dataclasses import dataclass, field

from wasmsched.api.types import Pod
from wasmsched.framework.interface import NodeToStatus
from wasmsched.framework.status import Code, Status, is_rejected

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


@dataclass
class Diagnosis:
    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, st: Status) -> None:
        if not st.plugin:
            return
        if st.code == Code.PENDING:
            self.pending_plugins.add(st.plugin)
        elif is_rejected(st):
            self.unschedulable_plugins.add(st.plugin)


class FitError(Exception):
    """No node fits the pod; its text is kube-scheduler's FailedScheduling message."""

    def __init__(self, pod: Pod | None, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            reasons: dict[str, int] = {}
            for st in d.node_to_status.node_to_status.values():
                for r in st.reasons:
                    reasons[r] = reasons.get(r, 0) + 1
            absent = self.num_all_nodes - d.node_to_status.len()
            if absent > 0:
                for r in d.node_to_status.absent_nodes_status.reasons:
                    reasons[r] = reasons.get(r, 0) + absent
            hist = sorted(f"{v} {k}" for k, v in reasons.items())
            if hist:
                msg += f" {', '.join(hist)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg
