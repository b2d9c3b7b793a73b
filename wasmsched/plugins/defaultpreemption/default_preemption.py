"""DefaultPreemption: the PostFilter plugin that preempts lower-priority pods (default_preemption.go)."""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.types import Pod, pod_priority
from wasmsched.config.args import DefaultPreemptionArgs, get_args
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ClusterEventWithHint
from wasmsched.framework.interface import (
    EnqueueExtensions,
    NodeToStatus,
    PostFilterPlugin,
    PostFilterResult,
    PreEnqueuePlugin,
)
from wasmsched.framework.preemption import (
    Candidate,
    DisruptionBudget,
    Evaluator,
    ScoreFunc,
    Victims,
    more_important_pod,
    pod_start_time_ns,
)
from wasmsched.framework.preemption.util import pod_terminating_by_preemption
from wasmsched.framework.status import Code, Status, code_of, is_success, not_success
from wasmsched.framework.types import NodeInfo, PodInfo

if TYPE_CHECKING:
    from wasmsched.framework.interface import Handle

NAME = "DefaultPreemption"

# IsEligiblePodFunc: whether `victim` on `node_info` may be preempted by `preemptor`, in addition to
# the requirement that the victim has lower priority.
IsEligiblePodFunc = Callable[[NodeInfo, PodInfo, Pod], bool]
# MoreImportantPodFunc: whether pod1 is more important than pod2 (pod2 is preempted first).
MoreImportantPodFunc = Callable[[Pod, Pod], bool]

# The random source of get_offset_and_num_candidates (kube's getOffsetRand = rand.Int31n): returns
# an int in [0, n). A module variable so tests can make it deterministic.
get_offset_rand: Callable[[int], int] = random.randrange


def _eligible_by_default(node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
    return True


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[PodInfo], pdbs: Sequence[DisruptionBudget],
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split `pod_infos` into (violating, non-violating) by whether evicting them violates a PDB.

    Stable: a sorted input gives sorted groups. A pod already in a PDB's disruptedPods was processed
    by the API server and does not count against that budget again.
    """
    allowed = [p.disruptions_allowed for p in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pi in pod_infos:
        pod = pi.pod
        violated = False
        # A pod with no labels matches no PDB.
        if pod.metadata.labels:
            labels = pod.metadata.labels
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.metadata.namespace or pdb.selector is None:
                    continue
                if not pdb.selector.matches(labels):
                    continue
                if pod.metadata.name in pdb.disrupted_pods:
                    continue
                # Decrement only when not in disruptedPods, not to over-decrement the budget.
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


class DefaultPreemption(PostFilterPlugin, PreEnqueuePlugin, EnqueueExtensions):
    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self._handle = handle
        self.args = args
        self.evaluator = Evaluator(NAME, handle, self)
        # Default: no filtering beyond the victim having lower priority than the preemptor.
        self.is_eligible_pod: IsEligiblePodFunc = _eligible_by_default
        # Default: by descending priority, then by earlier start time.
        self.more_important_pod: MoreImportantPodFunc = more_important_pod

    # PostFilter
    def post_filter(self, state: CycleState, pod: Pod,
                    filtered_node_status_map: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        # kube disables this path for pods of a PodGroup when the alpha workload-aware preemption
        # or topology-aware workload scheduling features are on; they are off by default.
        try:
            result, status = self.evaluator.preempt(state, pod, filtered_node_status_map)
        finally:
            m = self._handle.scheduler_metrics()
            if m is not None:
                m.preemption_attempts.inc()
        msg = status.message() if status is not None else ""
        if msg:
            assert status is not None
            return result, Status(status.code, ["preemption: " + msg])
        return result, status

    # PreEnqueue: kube gates pods whose asynchronous preemption is still running. Preemption runs
    # inline here (see framework/preemption/executor.py), so no pod is ever waiting for it.
    def pre_enqueue(self, pod: Pod) -> Status | None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # As kube with async preemption off: PreEnqueue never rejects, so no event is needed.
        return []

    # preemption.Interface
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """The number of candidates to find: a percentage of the nodes, at least an absolute
        number, never more than the nodes."""
        n = (num_nodes * self.args.min_candidate_nodes_percentage) // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return get_offset_rand(num_nodes), self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]) -> list[ScoreFunc] | None:
        return None

    def pod_eligible_to_preempt_others(self, pod: Pod,
                                       nominated_node_status: Status | None) -> tuple[bool, str]:
        """Whether `pod` may preempt: not with preemptionPolicy Never, and not while victims it
        already preempted on its nominated node are still terminating."""
        if pod.spec.preemptionPolicy == "Never":
            return False, "not eligible due to preemptionPolicy=Never."
        nom = pod.status.nominatedNodeName
        if nom:
            # If the nominated node is now UnschedulableAndUnresolvable, preempt again elsewhere.
            if code_of(nominated_node_status) == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            node_info = self._handle.snapshot_shared_lister().get(nom)
            if node_info is not None:
                for pi in node_info.pods:
                    if self._is_preemption_allowed(node_info, pi, pod) and pod_terminating_by_preemption(pi.pod):
                        return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    def _is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        return victim.priority < pod_priority(preemptor) and self.is_eligible_pod(node_info, victim, preemptor)

    def _sort_by_importance(self, pod_infos: list[PodInfo]) -> None:
        if self.more_important_pod is more_important_pod:
            # The default order as a key: one clock read instead of one per comparison.
            now = time.time_ns()
            pod_infos.sort(key=lambda pi: (-pi.priority, pod_start_time_ns(pi.pod, now)))
            return
        less = self.more_important_pod

        def cmp(a: PodInfo, b: PodInfo) -> int:
            return -1 if less(a.pod, b.pod) else (1 if less(b.pod, a.pod) else 0)

        pod_infos.sort(key=functools.cmp_to_key(cmp))

    def select_victims_on_node(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                               pdbs: Sequence[DisruptionBudget]) -> tuple[list[Pod], int, Status | None]:
        """The minimal set of pods on `node_info` to preempt so that `pod` fits.

        All lower-priority pods are removed first; if the pod fits, they are added back ("reprieved")
        from the most important down, PDB-violating ones first, keeping each one the pod still fits
        with. `state` and `node_info` are copies.
        """
        fh = self._handle

        def remove_pod(rpi: PodInfo) -> Status | None:
            if not node_info.remove_pod(rpi.pod):
                return Status.error(
                    f"no corresponding pod {rpi.pod.metadata.name} in pods of node {node_info.name}"
                )
            st = fh.run_pre_filter_extension_remove_pod(state, pod, rpi, node_info)
            return Status.error(st.as_error()) if not_success(st) else None

        def add_pod(api: PodInfo) -> Status | None:
            node_info.add_pod_info(api)
            st = fh.run_pre_filter_extension_add_pod(state, pod, api, node_info)
            return Status.error(st.as_error()) if not_success(st) else None

        potential = [pi for pi in node_info.pods if self._is_preemption_allowed(node_info, pi, pod)]
        for pi in potential:
            if (err := remove_pod(pi)) is not None:
                return [], 0, err
        # No potential victims: the node's state did not change, no need to evaluate it again.
        if not potential:
            return [], 0, Status.unresolvable("No preemption victims found for incoming pod")

        # If the pod does not fit even without all eligible pods, this node cannot help. (kube does
        # not consider the case of the pod having affinity to a victim, for performance.)
        st = fh.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not_success(st):
            return [], 0, st

        victims: list[PodInfo] = []
        self._sort_by_importance(potential)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)

        def reprieve(pi: PodInfo) -> tuple[bool, Status | None]:
            if (err := add_pod(pi)) is not None:
                return False, err
            fits = is_success(fh.run_filter_plugins_with_nominated_pods(state, pod, node_info))
            if not fits:
                if (err := remove_pod(pi)) is not None:
                    return False, err
                victims.append(pi)
            return fits, None

        num_violating_victim = 0
        for pi in violating:
            fits, err = reprieve(pi)
            if err is not None:
                return [], 0, err
            if not fits:
                num_violating_victim += 1
        for pi in non_violating:
            _, err = reprieve(pi)
            if err is not None:
                return [], 0, err

        # Keep the victims ordered from the most to the least important.
        if violating and non_violating:
            self._sort_by_importance(victims)
        return [pi.pod for pi in victims], num_violating_victim, None


def new(args: DefaultPreemptionArgs | Mapping[str, Any] | None, handle: Handle) -> DefaultPreemption:
    """New: the args as `get_args` takes them (None: the v1 defaults), validated."""
    return DefaultPreemption(get_args(DefaultPreemptionArgs, args), handle)
