"""The preemption Evaluator (pkg/scheduler/framework/preemption/preemption.go).

A PostFilter plugin supplies the policy (the `Interface` methods: eligibility, victim selection,
candidate count); the Evaluator runs the common flow: find candidate nodes by dry-running
preemption, pick the best one, evict its victims and nominate the preemptor there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from wasmsched.api.types import Pod, pod_priority
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.diagnosis import Diagnosis, FitError
from wasmsched.framework.interface import NodeToStatus, NominatingInfo, NominatingMode, PostFilterResult
from wasmsched.framework.preemption.candidate import Candidate, CandidateList, Victims
from wasmsched.framework.preemption.executor import Executor
from wasmsched.framework.preemption.util import DisruptionBudget, earliest_pod_start_time_ns
from wasmsched.framework.status import Code, Status, is_success, not_success
from wasmsched.framework.types import NodeInfo
from wasmsched.util.intbounds import INT32_MAX, INT64_MIN

if TYPE_CHECKING:
    from wasmsched.framework.interface import Handle

log = logging.getLogger(__name__)


ScoreFunc = Callable[[str], int]


class Interface(Protocol):
    """What a preemption plugin implements (preemption.Interface)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]: ...

    def pod_eligible_to_preempt_others(self, pod: Pod,
                                       nominated_node_status: Status | None) -> tuple[bool, str]: ...

    def select_victims_on_node(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                               pdbs: Sequence[DisruptionBudget]) -> tuple[list[Pod], int, Status | None]:
        """Both `state` and `node_info` are copies the method may change."""
        ...

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]) -> list[ScoreFunc] | None: ...


def aggregate_errors(errs: Sequence[BaseException]) -> BaseException | None:
    """utilerrors.NewAggregate: one error as is; several as "[msg1, msg2]" with duplicates dropped."""
    if not errs:
        return None
    if len(errs) == 1:
        return errs[0]
    msgs = list(dict.fromkeys(str(e) for e in errs))
    return RuntimeError(msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]")


def fit_error_message(num_all_nodes: int, node_to_status: NodeToStatus) -> str:
    """framework.FitError.Error() for a diagnosis with only node statuses (no PreFilter/PostFilter msg)."""
    return str(FitError(None, num_all_nodes, Diagnosis(node_to_status=node_to_status)))


def new_post_filter_result_with_nominated_node(name: str) -> PostFilterResult:
    return PostFilterResult(NominatingInfo(name, NominatingMode.OVERRIDE))


class Evaluator:
    def __init__(self, plugin_name: str, handle: Handle, interface: Interface) -> None:
        self.plugin_name = plugin_name
        self.handler = handle
        self.interface = interface
        self.executor = Executor(handle)

    def preempt(self, state: CycleState, pod: Pod,
                m: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        """Evaluator.Preempt.

        - (None, Error): a transient error; (None, Unschedulable): e.g. the preemptor waits for its
          victims to terminate. Both keep the pod's nominatedNodeName unchanged.
        - (result, Unschedulable): preemption cannot help; the result clears the nomination.
        - (result, Success): the happy path; the result nominates the chosen node, and the message (which
          kube 1.37 appends to the FailedScheduling message) names it and the number of victims.
        """
        # 0) kube re-reads the preemptor from its informer; the scheduler hands us the current object.
        # 1) Ensure the preemptor is eligible to preempt other pods.
        nominated_node_status = m.get(pod.status.nominatedNodeName)
        ok, msg = self.interface.pod_eligible_to_preempt_others(pod, nominated_node_status)
        if not ok:
            log.debug("pod %s is not eligible for preemption: %s", pod.metadata.name, msg)
            return None, Status.unschedulable(msg)

        # 2) Find all preemption candidates.
        all_nodes = self.handler.snapshot_shared_lister().list()
        candidates, node_to_status, err = self.find_candidates(state, all_nodes, pod, m)
        if err is not None and not candidates:
            return None, Status.error(err)

        # Return a FitError only when there are no candidates that fit the pod.
        if not candidates:
            assert node_to_status is not None
            node_to_status.absent_nodes_status = Status.unresolvable("Preemption is not helpful for scheduling")
            # The empty nomination clears the pod's nominatedNodeName, if any.
            return (new_post_filter_result_with_nominated_node(""),
                    Status.unschedulable(fit_error_message(len(all_nodes), node_to_status)))

        # 3) kube lets preemption-aware extenders filter the candidates here; the Handle exposes
        #    no extenders, so there is nothing to call.

        # 4) Find the best candidate.
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status.unschedulable("no candidate node for preemption")

        # 5) Evict the victims before nominating (kube's synchronous prepareCandidate).
        st = self.executor.prepare_candidate(best, pod, self.plugin_name)
        if not_success(st):
            return None, st
        return new_post_filter_result_with_nominated_node(best.name), Status(
            Code.SUCCESS, [f"found a potential placement for pod on node {best.name}, "
                           f"preempting {len(best.victims.pods)} victims"])

    def find_candidates(self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Pod,
                        m: NodeToStatus) -> tuple[list[Candidate], NodeToStatus | None, BaseException | None]:
        """Evaluator.findCandidates: dry-run preemption on the nodes whose filter status is Unschedulable.

        UnschedulableAndUnresolvable nodes (and nodes absent from `m`, unless its absent status is
        Unschedulable) are never candidates: removing pods cannot make the pod fit there.
        """
        if not all_nodes:
            return [], None, RuntimeError("no nodes available")
        potential_nodes = m.nodes_for_status_code(self.handler.snapshot_shared_lister(), Code.UNSCHEDULABLE)
        if not potential_nodes:
            log.debug("preemption will not help schedule pod %s on any node", pod.metadata.name)
            return [], NodeToStatus(), None
        pdbs = [DisruptionBudget.from_pdb(p) for p in self.handler.client().list_pod_disruption_budgets()]
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential_nodes))
        return self.dry_run_preemption(state, pod, potential_nodes, pdbs, offset, num_candidates)

    def dry_run_preemption(self, state: CycleState, pod: Pod, potential_nodes: Sequence[NodeInfo],
                           pdbs: Sequence[DisruptionBudget], offset: int, num_candidates: int,
                           ) -> tuple[list[Candidate], NodeToStatus, BaseException | None]:
        """Evaluator.DryRunPreemption: simulate preemption on the potential nodes, starting at `offset`.

        Stops once `num_candidates` are found, at least one of them without PDB violations.
        kube checks nodes in parallel and cancels when enough are found; checking them one by one
        gives the result kube gets with parallelism 1 (and Python threads would not run the
        CPU-bound filters any faster). Non-violating candidates come first in the result.
        """
        non_violating = CandidateList(num_candidates)
        violating = CandidateList(num_candidates)
        node_statuses = NodeToStatus()
        errs: list[BaseException] = []
        n = len(potential_nodes)
        for i in range(n):
            node_info_copy = potential_nodes[(offset + i) % n].clone()
            node_name = node_info_copy.name
            state_copy = state.clone()
            pods, num_pdb_violations, status = self.interface.select_victims_on_node(
                state_copy, pod, node_info_copy, pdbs
            )
            success = is_success(status)
            if success and pods:
                c = Candidate(node_name, Victims(pods, num_pdb_violations))
                if num_pdb_violations == 0:
                    non_violating.add(c)
                else:
                    violating.add(c)
                nvc, vc = non_violating.size(), violating.size()
                if nvc > 0 and nvc + vc >= num_candidates:
                    break
                continue
            if success:
                status = Status.error(f'expected at least one victim pod on node "{node_name}"')
            assert status is not None
            if status.code == Code.ERROR:
                errs.append(status.as_error())
            node_statuses.set(node_name, status)
        return non_violating.get() + violating.get(), node_statuses, aggregate_errors(errs)

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """Evaluator.SelectCandidate: the best candidate by the plugin's score functions."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims_map = self.interface.candidates_to_victims_map(candidates)
        score_funcs = self.interface.ordered_score_funcs(victims_map)
        node = pick_one_node_for_preemption(victims_map, score_funcs)
        victims = victims_map.get(node)
        if victims is not None:
            return Candidate(node, victims)
        # Should not happen; kube logs it and returns the first candidate not to break the flow.
        log.error("unexpected case: no candidate was selected among %d", len(candidates))
        return candidates[0]


def pick_one_node_for_preemption(nodes_to_victims: dict[str, Victims],
                                 score_funcs: list[ScoreFunc] | None) -> str:
    """pickOneNodeForPreemption. Victims of each node are ordered by decreasing priority.

    Without plugin score functions, the node is chosen by, in order:
    1. the minimum number of PDB violations,
    2. the minimum highest victim priority,
    3. the minimum sum of victim priorities,
    4. the minimum number of victims,
    5. the latest start time of the highest-priority victims,
    6. then the first such node (kube iterates a map, so "first" is arbitrary there; here it is
       the order of the candidates).
    """
    if not nodes_to_victims:
        return ""
    all_candidates = list(nodes_to_victims)
    if not score_funcs:
        def min_num_pdb_violating(node: str) -> int:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> int:
            return -pod_priority(nodes_to_victims[node].pods[0])

        def min_sum_priorities(node: str) -> int:
            # MaxInt32+1 is added to every priority so that all are >= 0: a node with a few
            # negative-priority victims must not win over one with fewer such victims.
            return -sum(pod_priority(p) + INT32_MAX + 1 for p in nodes_to_victims[node].pods)

        def min_num_pods(node: str) -> int:
            return -len(nodes_to_victims[node].pods)

        def latest_start_time(node: str) -> int:
            earliest = earliest_pod_start_time_ns(nodes_to_victims[node].pods)
            if earliest is None:
                log.error("unexpected nil earliestStartTime for node %s", node)
                return INT64_MIN
            return earliest

        score_funcs = [min_num_pdb_violating, min_highest_priority, min_sum_priorities, min_num_pods,
                       latest_start_time]

    for f in score_funcs:
        selected: list[str] = []
        max_score = INT64_MIN
        for node in all_candidates:
            score = f(node)
            if score > max_score:
                max_score = score
                selected = []
            if score == max_score:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        all_candidates = selected
    return all_candidates[0]
