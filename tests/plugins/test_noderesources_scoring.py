"""Ports of noderesources/least_allocated_test.go, most_allocated_test.go and
requested_to_capacity_ratio_test.go (the NodeResourcesFit scoring strategies)."""

from __future__ import annotations

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.config.args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from wasmsched.config.errors import ConfigError
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE
from wasmsched.framework.status import Code
from wasmsched.plugins import noderesources
from wasmsched.plugins.noderesources import Fit
from wasmsched.plugins.noderesources.requested_to_capacity_ratio import go_round_ratio
from wasmsched.testing.batch import batch_scores
from wasmsched.testing.fake_handle import FakeHandle

from .util import INVALID_RESOURCE_WEIGHTS
from .util import request_pod as pod
from .util import resource_node as make_node

EXTENDED_RES = "abc.com/xyz"
DEFAULT_RESOURCES = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
EXTENDED_RESOURCE_SET = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec(EXTENDED_RES, 1)]


def st_node(name: str, resources: dict[str, str] | None = None) -> Node:
    """st.MakeNode().Name(name).Capacity(resources): 32 pods unless given, allocatable = capacity."""
    n = Node()
    n.metadata.name = name
    for k, v in {"pods": "32", **(resources or {})}.items():
        n.status.capacity[k].string = v
        n.status.allocatable[k].string = v
    return n


def cm(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


def run_scores(strategy: ScoringStrategy, requested_pod: Pod, nodes: list[Node], existing: list[Pod],
               run_pre_score: bool = True) -> tuple[list[int], list[int | None]]:
    """Scores per node (Score) and of the batch (score_batch); codes are None on success."""
    handle = FakeHandle(pods=existing, nodes=nodes)
    pl = noderesources.new_fit(NodeResourcesFitArgs(scoring_strategy=strategy), handle)
    assert isinstance(pl, Fit)
    state = CycleState()
    infos = handle.snapshot_shared_lister().list()
    if run_pre_score:
        assert pl.pre_score(state, requested_pod, infos) is None
    scores: list[int] = []
    codes: list[int | None] = []
    for ni in infos:
        score, st = pl.score(state, requested_pod, ni)
        scores.append(score)
        codes.append(None if st is None else st.code)
    batch, st = batch_scores(pl, state, requested_pod, infos)
    if st is None:
        assert batch == scores
    else:
        assert st.code == codes[0]
    return scores, codes


_TWO_4000 = [st_node("node1", cm("4000", "10000")), st_node("node2", cm("4000", "10000"))]
_SIZED = [st_node("node1", cm("4000", "10000")), st_node("node2", cm("6000", "10000"))]
_BIG = [st_node("node1", cm("10000", "20000")), st_node("node2", cm("10000", "20000"))]
_REQ_3000_5000 = pod(cm("1000", "2000"), cm("2000", "3000"))
_EXT_NODES = [st_node("node1", cm("6000", "10000")), st_node("node2", {**cm("6000", "10000"), EXTENDED_RES: "4"})]

# (name, requested pod, nodes, existing pods, resources, expected scores)
LEAST_ALLOCATED_CASES = [
    ("nothing scheduled, nothing requested", pod(), _TWO_4000, [], DEFAULT_RESOURCES,
     [MAX_NODE_SCORE, MAX_NODE_SCORE]),
    ("nothing scheduled, resources requested, differently sized nodes", _REQ_3000_5000, _SIZED, [],
     DEFAULT_RESOURCES, [37, 50]),
    ("no resources requested, pods scheduled", pod(), _TWO_4000,
     [pod(node="node1"), pod(node="node1"), pod(node="node2"), pod(node="node2")], DEFAULT_RESOURCES,
     [MAX_NODE_SCORE, MAX_NODE_SCORE]),
    ("no resources requested, pods scheduled with resources", pod(), _BIG,
     [pod(cm("3000", "0"), node="node1"), pod(cm("3000", "0"), node="node1"), pod(cm("3000", "0"), node="node2"),
      pod(cm("3000", "5000"), node="node2")], DEFAULT_RESOURCES, [70, 57]),
    ("resources requested, pods scheduled with resources", _REQ_3000_5000, _BIG,
     [pod(cm("3000", "0"), node="node1"), pod(cm("3000", "5000"), node="node2")], DEFAULT_RESOURCES, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes", _REQ_3000_5000,
     [st_node("node1", cm("10000", "20000")), st_node("node2", cm("10000", "50000"))],
     [pod(cm("3000", "0"), node="node1"), pod(cm("3000", "5000"), node="node2")], DEFAULT_RESOURCES, [57, 60]),
    ("requested resources exceed node capacity", pod(cm("3000", "0")), _TWO_4000,
     [pod(cm("3000", "0"), node="node1"), pod(cm("3000", "5000"), node="node2")], DEFAULT_RESOURCES, [50, 25]),
    ("zero node resources, pods scheduled with resources", pod(), [st_node("node1"), st_node("node2")],
     [pod(cm("3000", "0"), node="node1"), pod(cm("3000", "5000"), node="node2")], DEFAULT_RESOURCES,
     [MIN_NODE_SCORE, MIN_NODE_SCORE]),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
     pod(cm("1000", "2000"), cm("2000", "3000"), node="node1"), _SIZED, [],
     [ResourceSpec("memory", 2), ResourceSpec("cpu", 1)], [41, 50]),
    ("bypass extended resource if the pod does not request", pod(cm("1000", "2000"), cm("2000", "3000")),
     _EXT_NODES, [], EXTENDED_RESOURCE_SET, [50, 50]),
    ("honor extended resource if the pod requests", pod({**cm("3000", "5000"), EXTENDED_RES: "2"}),
     [st_node("node1", {**cm("6000", "10000"), EXTENDED_RES: "4"}),
      st_node("node2", {**cm("6000", "10000"), EXTENDED_RES: "10"})], [], EXTENDED_RESOURCE_SET, [50, 60]),
    ("if the node doesn't have a resource", pod(cm("3000", "4000")), _EXT_NODES, [],
     [ResourceSpec(EXTENDED_RES, 2), ResourceSpec("cpu", 1), ResourceSpec("memory", 1)], [55, 55]),
]


@pytest.mark.parametrize(("name", "requested_pod", "nodes", "existing", "resources", "want"),
                         LEAST_ALLOCATED_CASES, ids=[c[0] for c in LEAST_ALLOCATED_CASES])
def test_least_allocated_scoring_strategy(name: str, requested_pod: Pod, nodes: list[Node], existing: list[Pod],
                                          resources: list[ResourceSpec], want: list[int]) -> None:
    scores, codes = run_scores(ScoringStrategy(LEAST_ALLOCATED, resources), requested_pod, nodes, existing)
    assert scores == want
    assert codes == [None] * len(nodes)


MOST_ALLOCATED_CASES = [
    ("nothing scheduled, nothing requested", pod(), _TWO_4000, [], DEFAULT_RESOURCES,
     [MIN_NODE_SCORE, MIN_NODE_SCORE]),
    ("nothing scheduled, resources requested, differently sized nodes", _REQ_3000_5000, _SIZED, [],
     DEFAULT_RESOURCES, [62, 50]),
    ("no resources requested, pods scheduled with resources", pod(), _BIG,
     [pod(cm("3000", "0"), node="node1"), pod(cm("3000", "0"), node="node1"), pod(cm("3000", "0"), node="node2"),
      pod(cm("3000", "5000"), node="node2")], DEFAULT_RESOURCES, [30, 42]),
    ("resources requested, pods scheduled with resources", _REQ_3000_5000, _BIG,
     [pod(cm("3000", "0"), node="node1"), pod(cm("3000", "5000"), node="node2")], DEFAULT_RESOURCES, [42, 55]),
    ("resources requested equal node capacity", pod(cm("2000", "4000"), cm("3000", "5000")),
     [st_node("node1", cm("5000", "10000")), st_node("node2", cm("10000", "9000"))], [], DEFAULT_RESOURCES,
     [95, 75]),
    ("nothing scheduled, resources requested, differently sized nodes (weighted)", _REQ_3000_5000, _SIZED, [],
     [ResourceSpec("memory", 2), ResourceSpec("cpu", 1)], [58, 50]),
    ("no resources requested, pods scheduled, nonzero request for resource", pod({}),
     [st_node("node1", cm("250m", "1000Mi")), st_node("node2", cm("250m", "1000Mi"))],
     [pod({}, node="node1"), pod({}, node="node1")], DEFAULT_RESOURCES, [80, 30]),
    ("bypass extended resource if the pod does not request", pod(cm("1000", "2000"), cm("2000", "3000")),
     _EXT_NODES, [], EXTENDED_RESOURCE_SET, [50, 50]),
    ("honor extended resource if the pod request", pod({**cm("3000", "5000"), EXTENDED_RES: "2"}, node="node1"),
     [st_node("node1", {**cm("6000", "10000"), EXTENDED_RES: "4"}),
      st_node("node2", {**cm("6000", "10000"), EXTENDED_RES: "10"})], [], EXTENDED_RESOURCE_SET, [50, 40]),
    ("if the node doesn't have a resource", pod(cm("3000", "4000"), node="node1"), _EXT_NODES, [],
     [ResourceSpec(EXTENDED_RES, 2), ResourceSpec("cpu", 1), ResourceSpec("memory", 1)], [45, 45]),
]


@pytest.mark.parametrize(("name", "requested_pod", "nodes", "existing", "resources", "want"),
                         MOST_ALLOCATED_CASES, ids=[c[0] for c in MOST_ALLOCATED_CASES])
def test_most_allocated_scoring_strategy(name: str, requested_pod: Pod, nodes: list[Node], existing: list[Pod],
                                         resources: list[ResourceSpec], want: list[int]) -> None:
    scores, codes = run_scores(ScoringStrategy(MOST_ALLOCATED, resources), requested_pod, nodes, existing)
    assert scores == want
    assert codes == [None] * len(nodes)


@pytest.mark.parametrize("strategy", [LEAST_ALLOCATED, MOST_ALLOCATED])
def test_resources_not_set_is_an_error(strategy: str) -> None:
    """"Resources not set, pods scheduled with error": Score fails, scoring MinNodeScore."""
    scores, codes = run_scores(ScoringStrategy(strategy, []), _REQ_3000_5000, _SIZED, [])
    assert scores == [MIN_NODE_SCORE, MIN_NODE_SCORE]
    assert codes == [Code.ERROR, Code.ERROR]


@pytest.mark.parametrize("strategy", [LEAST_ALLOCATED, MOST_ALLOCATED])
@pytest.mark.parametrize(
    ("name", "resources", "field"),
    INVALID_RESOURCE_WEIGHTS,
)
def test_invalid_resource_weights(strategy: str, name: str, resources: list[ResourceSpec], field: str) -> None:
    with pytest.raises(ConfigError) as exc:
        noderesources.new_fit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy, resources)),
                              FakeHandle())
    assert [getattr(e, "field", None) for e in exc.value.errors] == [field]


def rtc(resources: list[ResourceSpec], shape: list[tuple[int, int]]) -> ScoringStrategy:
    return ScoringStrategy(REQUESTED_TO_CAPACITY_RATIO, resources,
                           RequestedToCapacityRatioParam([UtilizationShapePoint(u, s) for u, s in shape]))


RTC_CASES = [
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)", pod(), _TWO_4000,
     [pod(node="node1"), pod(node="node1")], [MAX_NODE_SCORE, MAX_NODE_SCORE]),
    (("nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have "
     "priority)"), _REQ_3000_5000, _SIZED, [pod(node="node1"), pod(node="node1")], [38, 50]),
    ("no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
     pod(), _SIZED, [pod(cm("3000", "5000"), node="node1"), pod(cm("3000", "5000"), node="node2")], [38, 50]),
]


@pytest.mark.parametrize(("name", "requested_pod", "nodes", "existing", "want"), RTC_CASES,
                         ids=[c[0] for c in RTC_CASES])
def test_requested_to_capacity_ratio_scoring_strategy(name: str, requested_pod: Pod, nodes: list[Node],
                                                      existing: list[Pod], want: list[int]) -> None:
    strategy = rtc(DEFAULT_RESOURCES, [(0, 10), (100, 0)])
    scores, codes = run_scores(strategy, requested_pod, nodes, existing)
    assert scores == want
    assert codes == [None] * len(nodes)


_FOO = "intel.com/foo"
_BAR = "intel.com/bar"
_MIB = 1024 * 1024
_SINGLE_NODES = [make_node("node1", 4000, 10000 * _MIB, {_FOO: 8}), make_node("node2", 4000, 10000 * _MIB, {_FOO: 4})]
SINGLE_EXTENDED = [
    ("nothing scheduled, nothing requested", pod(), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", pod({_FOO: "2"}), [pod()], [2, 5]),
    ("resources requested, pods scheduled with resources, on node with existing pod running ", pod({_FOO: "2"}),
     [pod({_FOO: "2"}, node="node2")], [2, 10]),
    ("resources requested, pods scheduled with more resources", pod({_FOO: "4"}), [pod()], [5, 10]),
]


@pytest.mark.parametrize(("name", "requested_pod", "existing", "want"), SINGLE_EXTENDED,
                         ids=[c[0] for c in SINGLE_EXTENDED])
def test_resource_bin_packing_single_extended(name: str, requested_pod: Pod, existing: list[Pod],
                                              want: list[int]) -> None:
    strategy = rtc([ResourceSpec(_FOO, 1)], [(0, 0), (100, 1)])
    scores, codes = run_scores(strategy, requested_pod, _SINGLE_NODES, existing)
    assert scores == want
    assert codes == [None, None]


_MULTI_NODES = [make_node("node1", 4000, 10000 * _MIB, {_FOO: 8, _BAR: 4}),
                make_node("node2", 4000, 10000 * _MIB, {_FOO: 4, _BAR: 8})]
MULTIPLE_EXTENDED = [
    ("nothing scheduled, nothing requested", pod(), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", pod({_FOO: "2", _BAR: "2"}), [pod()], [4, 3]),
    ("resources requested, pods scheduled with resources, on node with existing pod running ",
     pod({_FOO: "2", _BAR: "2"}), [pod({_FOO: "4", _BAR: "2"}, node="node2")], [4, 7]),
    ("resources requested, pods scheduled with more resources", pod({_FOO: "4", _BAR: "2"}), [pod()], [5, 5]),
]


@pytest.mark.parametrize(("name", "requested_pod", "existing", "want"), MULTIPLE_EXTENDED,
                         ids=[c[0] for c in MULTIPLE_EXTENDED])
def test_resource_bin_packing_multiple_extended(name: str, requested_pod: Pod, existing: list[Pod],
                                                want: list[int]) -> None:
    strategy = rtc([ResourceSpec(_FOO, 3), ResourceSpec(_BAR, 5)], [(0, 0), (100, 1)])
    scores, codes = run_scores(strategy, requested_pod, _MULTI_NODES, existing)
    assert scores == want
    assert codes == [None, None]


@pytest.mark.parametrize(("num", "den", "want"), [(7, 2, 4), (5, 2, 3), (9, 4, 2), (2, 3, 1), (1, 3, 0), (0, 5, 0),
                                                  (-7, 2, -4)])
def test_go_round_ratio(num: int, den: int, want: int) -> None:
    """math.Round rounds halves away from zero (Python's round() would give 2 for 5/2)."""
    assert go_round_ratio(num, den) == want
