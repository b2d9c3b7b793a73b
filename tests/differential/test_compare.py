"""The differential harness itself, without kube: comparison rules and shrinking."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, cast

from tests.differential.check import check, shrink
from tests.differential.compare import compare
from tests.differential.local import CaseError, run_case
from tests.differential.oracle import Oracle


def node(name: str, cpu: str = "2") -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": "4Gi", "pods": "10"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": alloc, "capacity": alloc}}


def pod(name: str, cpu: str, node_name: str = "", priority_class: str = "") -> dict[str, Any]:
    p: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    if priority_class:
        p["spec"]["priorityClassName"] = priority_class
    return p


HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
CLUSTER = [HIGH, node("a"), node("b", "1"), pod("r1", "1500m", "a"), pod("p1", "1"), pod("p2", "1"),
           pod("p3", "1500m", priority_class="high")]


def test_cycle_mode_reports_every_node_and_kubes_message() -> None:
    doc = run_case(CLUSTER, None, "cycle")
    p3 = doc["attempts"][2]
    assert p3["pod"] == "default/p3"
    assert p3["filter"]["a"] == {"code": "Unschedulable", "plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu"]}
    assert p3["filter"]["b"]["code"] == "UnschedulableAndUnresolvable"
    assert p3["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    assert p3["node"] is None and p3["best"] == []


def test_run_mode_records_preemption_and_follows_the_queue_order() -> None:
    doc = run_case(CLUSTER, None, "run")
    pods = [a["pod"] for a in doc["attempts"]]
    assert pods[0] == "default/p3"  # highest priority first
    assert doc["attempts"][0]["nominatedNode"] == "a"
    assert doc["attempts"][0]["victims"] == ["default/r1"]
    assert doc["final"]["default/p3"]["node"] == "a"


def test_equal_documents_compare_equal() -> None:
    doc = run_case(CLUSTER, None, "run")
    assert compare(doc, copy.deepcopy(doc)).equal


def test_a_different_reason_names_attempt_field_and_node() -> None:
    ours = run_case(CLUSTER, None, "cycle")
    kube = copy.deepcopy(ours)
    kube["attempts"][2]["filter"]["a"]["reasons"] = ["Insufficient memory"]
    c = compare(ours, kube)
    assert c.differences == [
        'attempt 3 (default/p3) filter[a][reasons]: wasmsched ["Insufficient cpu"], kube ["Insufficient memory"]']


def test_nominations_kube_could_make_too_end_the_comparison_without_a_difference() -> None:
    ours = run_case(CLUSTER, None, "run")
    kube = copy.deepcopy(ours)
    first = kube["attempts"][0]
    first["nominatedNode"] = "b"
    first["victims"] = []
    first["preemptionCandidates"] = ["a", "b"]
    # the preemption part of the message names the node: it may differ, the rest may not
    first["message"] = first["message"].split(" preemption: ")[0] + " preemption: found ... on node b"
    kube["attempts"][1]["message"] = "anything: the runs parted ways"
    c = compare(ours, kube)
    assert c.equal and "both possible for kube" in c.diverged
    first["message"] = "0/2 nodes are available: other reasons. preemption: found ... on node b"
    assert not compare(ours, kube).equal
    first["message"] = ours["attempts"][0]["message"]
    first["preemptionCandidates"] = ["b"]
    assert not compare(ours, kube).equal


def test_different_queue_order_is_a_difference() -> None:
    ours = run_case(CLUSTER, None, "run")
    kube = copy.deepcopy(ours)
    kube["attempts"][0]["pod"] = "default/p1"
    assert compare(ours, kube).differences == ["attempt 1: wasmsched tried default/p3, kube tried default/p1"]


class FakeOracle:
    """kube's answer is wasmsched's own, except that a node named "odd" changes the first message."""

    def ask(self, objects: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None,
            mode: str) -> dict[str, Any]:
        try:
            doc = run_case(objects, config, mode)
        except CaseError as e:
            return {"error": str(e)}
        if any(o["kind"] == "Node" and o["metadata"]["name"] == "odd" for o in objects) and doc["attempts"]:
            doc["attempts"][0]["message"] += " (odd)"
        return doc


def test_shrinking_keeps_only_what_the_difference_needs() -> None:
    oracle = cast(Oracle, FakeOracle())
    objects = [*CLUSTER, node("odd")]
    objects_small, config = shrink(oracle, objects, {"apiVersion": "kubescheduler.config.k8s.io/v1",
                                                     "kind": "KubeSchedulerConfiguration"}, "cycle")
    assert config is None
    # One pending pod (for an attempt) and the odd node; labels, resources, priority dropped too.
    assert sorted(o["kind"] for o in objects_small) == ["Node", "Pod"]
    small_node = next(o for o in objects_small if o["kind"] == "Node")
    small_pod = next(o for o in objects_small if o["kind"] == "Pod")
    assert small_node["metadata"] == {"name": "odd"}
    assert "resources" not in small_pod["spec"]["containers"][0] and "priorityClassName" not in small_pod["spec"]
    report = check(oracle, 7, objects, None, "cycle")
    assert report is not None and report.startswith("seed 7 (cycle mode): 1 difference(s)")
    assert "shrunk case:" in report and "name: odd" in report


def test_no_report_when_both_sides_agree() -> None:
    class Same:
        def ask(self, objects: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None,
                mode: str) -> dict[str, Any]:
            return run_case(objects, config, mode)
    assert check(cast(Oracle, Same()), 1, CLUSTER, None, "run") is None


def test_a_run_difference_kube_does_not_repeat_is_the_oracles_timing() -> None:
    class FlakyOnce:
        """Drops the last attempt of its first run-mode answer (a run that ended before a requeue)."""

        def __init__(self) -> None:
            self.calls = 0

        def ask(self, objects: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None,
                mode: str) -> dict[str, Any]:
            self.calls += 1
            doc = run_case(objects, config, mode)
            if self.calls == 1:
                doc["attempts"].pop()
            return doc

    flaky = FlakyOnce()
    seen: list[bool] = []
    assert check(cast(Oracle, flaky), 1, CLUSTER, None, "run",
                 compared=lambda c: seen.append(c.oracle_retried)) is None
    assert flaky.calls == 2 and seen == [True]

    class AlwaysShort(FlakyOnce):
        def ask(self, objects: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None,
                mode: str) -> dict[str, Any]:
            doc = run_case(objects, config, mode)
            doc["attempts"].pop()
            return doc

    report = check(cast(Oracle, AlwaysShort()), 2, CLUSTER, None, "run", shrink_on_difference=False)
    assert report is not None and "attempts: wasmsched made 4, kube 3" in report


def test_a_filter_error_ends_the_cycle_so_per_node_verdicts_are_not_compared() -> None:
    error = "running \"DynamicResources\" filter plugin: claim default/c, request r: boom"
    base: dict[str, Any] = {"pod": "default/p", "profile": "default-scheduler",
            "preFilter": {"code": "Success", "plugin": "", "reasons": [], "nodeNames": None},
            "scores": {}, "best": [], "node": None, "code": "Error", "message": error}
    ours: dict[str, Any] = {"mode": "cycle", "attempts": [{**base, "filter": {}}]}
    kube: dict[str, Any] = {"mode": "cycle", "attempts": [{**base, "filter": {
        "a": {"code": "Error", "plugin": "DynamicResources", "reasons": [error]},
        "b": {"code": "UnschedulableAndUnresolvable", "plugin": "NodeUnschedulable",
              "reasons": ["node(s) were unschedulable"]}}}]}
    assert compare(ours, kube).equal
    kube["attempts"][0].update(scores={"b": {"total": 7}}, best=["b"])
    assert compare(ours, kube).equal
    # the error itself still counts, and a verdict where a cycle did not end in an Error
    kube["attempts"][0]["message"] = "other"
    assert not compare(ours, kube).equal
    kube["attempts"][0].update(message=error, code="Unschedulable")
    ours["attempts"][0]["code"] = "Unschedulable"
    assert compare(ours, kube).differences[0].startswith("attempt 1 (default/p) filter[a]")


def test_the_preemption_dry_runs_filter_errors_are_compared_in_any_order() -> None:
    # kube aggregates them in the order it tried the candidates (Go map order)
    e1 = 'running "DynamicResources" filter plugin: claim default/c, request s0: asks for all devices, but x, y'
    e2 = 'running "DynamicResources" filter plugin: claim default/c, request s0: cannot add device z'
    head = "0/2 nodes are available: 2 Insufficient cpu. preemption: "
    base: dict[str, Any] = {"pod": "default/p", "profile": "default-scheduler",
            "preFilter": {"code": "Success", "plugin": "", "reasons": [], "nodeNames": None},
            "filter": {}, "scores": {}, "best": [], "node": None, "code": "Unschedulable"}
    ours: dict[str, Any] = {"mode": "cycle", "attempts": [{**base, "message": f"{head}[{e1}, {e2}]"}]}
    kube: dict[str, Any] = {"mode": "cycle", "attempts": [{**base, "message": f"{head}[{e2}, {e1}]"}]}
    assert compare(ours, kube).equal
    kube["attempts"][0]["message"] = f"{head}[{e2}, {e1.replace('x, y', 'x')}]"
    assert not compare(ours, kube).equal
