"""Port of noderesources/balanced_allocation_test.go (kube >= 1.36 scoring of the balance change;
the DRA-extended-resource cases are not modelled)."""

from __future__ import annotations

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.config.args import NodeResourcesBalancedAllocationArgs, ResourceSpec
from wasmsched.config.errors import ConfigError
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code
from wasmsched.plugins import noderesources
from wasmsched.plugins.noderesources import BALANCED_ALLOCATION_NAME, BalancedAllocation
from wasmsched.plugins.noderesources.balanced_allocation import (
    PRE_SCORE_STATE_KEY,
    balanced_resource_score,
    balanced_resource_scorer,
)
from wasmsched.testing.batch import batch_scores
from wasmsched.testing.fake_handle import FakeHandle

from .util import request_pod as pod
from .util import resource_node as make_node
from .util import score_each

GPU = "nvidia.com/gpu"
DEFAULT_SET = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
WITH_GPU = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec(GPU, 1)]


def cpu_only(cpu: str) -> dict[str, str]:
    return {"cpu": cpu}


def cpu_and_memory(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


def cpu_and_memory_and_gpu(cpu: str, memory: str, gpu: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory, GPU: gpu}


_REQ = pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"))
_EXISTING = [
    pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
    pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2"),
]

# (name, requested pod, nodes, existing pods, resources, expected scores, run PreScore)
CASES = [
    # Node1: CPU 0 -> 75%, Memory 0 -> 50%: 100 -> 87 => 68. Node2: 0 -> 50% both: 100 -> 100 => 75.
    ("nothing scheduled, resources requested, differently sized nodes", _REQ,
     [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)], [], DEFAULT_SET, [68, 75], True),
    # Node1: CPU 30% -> 60%, Memory 0 -> 25%: 85 -> 82 => 73. Node2: CPU 30 -> 60, Memory 25 -> 50: 97 -> 95 => 74.
    ("resources requested, pods scheduled with resources", _REQ,
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)], _EXISTING, DEFAULT_SET, [73, 74], True),
    # Node2: CPU 30% -> 60%, Memory 10% -> 20%: 90 -> 80 => 70.
    ("resources requested, pods scheduled with resources, differently sized nodes", _REQ,
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)], _EXISTING, DEFAULT_SET, [73, 70], True),
    # Node1: CPU 100% -> 100%, Memory 0 -> 100%: 50 -> 100 => 100. Node2: CPU 0, Memory 0 -> 100%: 100 -> 50 => 50.
    ("resources requested, pods scheduled with resources, nodes to reach min/max score",
     pod({"memory": "2000"}, {"memory": "3000"}), [make_node("node1", 3000, 5000), make_node("node2", 3000, 5000)],
     [pod(cpu_only("1000m"), cpu_only("2000m"), node="node1")], DEFAULT_SET, [100, 50], True),
    # Node1: CPU 50% -> 100%, Memory 0: 75 -> 50 => 62. Node2: CPU 50 -> 100, Memory 50: 100 -> 75 => 62.
    ("requested resources at node capacity", pod(cpu_only("1000m"), cpu_only("2000m")),
     [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)], _EXISTING, DEFAULT_SET, [62, 62], True),
    # Node1: CPU 85.7%, Memory 12.5%, GPU 37.5% -> 50%: 69 -> 70 => 75.
    # Node2: CPU 85.7%, Memory 12.5%, GPU 0 -> 12.5%: 62 -> 65 => 76.
    ("scalar resource is included in the score computation if pod requests the scalar resource",
     pod(cpu_and_memory_and_gpu("0", "0", "1")),
     [make_node("node1", 3500, 40000, {GPU: 8}), make_node("node2", 3500, 40000, {GPU: 8})],
     [pod(cpu_and_memory("1000m", "2000"), cpu_and_memory_and_gpu("2000m", "3000", "3"), node="node1"),
      pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2")], WITH_GPU, [75, 76],
     True),
    # CPU 0 -> 85.7%, Memory 0 -> 12.5%, GPU not requested so ignored: 100 -> 63 => 56 on both.
    ("scalar resource is not included in the score computation if pod doesn't request the scalar resource", _REQ,
     [make_node("node1", 3500, 40000, {GPU: 8}), make_node("node2", 3500, 40000)], [], WITH_GPU, [56, 56], True),
    ("resources requested, pods scheduled with resources if PreScore not called", _REQ,
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)], _EXISTING, DEFAULT_SET, [73, 74],
     False),
]


def _plugin(resources: list[ResourceSpec], handle: FakeHandle) -> BalancedAllocation:
    pl = noderesources.new_balanced_allocation(NodeResourcesBalancedAllocationArgs(resources), handle)
    assert isinstance(pl, BalancedAllocation)
    return pl


@pytest.mark.parametrize(("name", "requested_pod", "nodes", "existing", "resources", "want", "run_pre_score"),
                         CASES, ids=[c[0] for c in CASES])
def test_node_resources_balanced_allocation(name: str, requested_pod: Pod, nodes: list[Node], existing: list[Pod],
                                            resources: list[ResourceSpec], want: list[int],
                                            run_pre_score: bool) -> None:
    handle = FakeHandle(pods=existing, nodes=nodes)
    pl = _plugin(resources, handle)
    state = CycleState()
    infos = handle.snapshot_shared_lister().list()
    if run_pre_score:
        assert pl.pre_score(state, requested_pod, infos) is None
    assert [s.score for s in score_each(pl, state, requested_pod, infos)] == want


def test_best_effort_pod_skipped_in_pre_score() -> None:
    """"nothing scheduled, nothing requested, skip in PreScore"."""
    nodes = [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)]
    handle = FakeHandle(nodes=nodes)
    pl = _plugin(DEFAULT_SET, handle)
    state = CycleState()
    st = pl.pre_score(state, pod(), handle.snapshot_shared_lister().list())
    assert st is not None and st.code == Code.SKIP
    assert state.get(PRE_SCORE_STATE_KEY) is None


def test_best_effort_pod_scores_zero_without_pre_score() -> None:
    nodes = [make_node("node1", 4000, 10000)]
    handle = FakeHandle(nodes=nodes, pods=[pod(cpu_only("1000m"), node="node1")])
    pl = _plugin(DEFAULT_SET, handle)
    ni = handle.snapshot_shared_lister().list()[0]
    assert pl.score(CycleState(), pod(), ni) == (0, None)
    assert batch_scores(pl, CycleState(), pod(), [ni]) == ([0], None)


@pytest.mark.parametrize(
    ("requested", "allocated", "allocatable", "want"),
    [
        ([0, 0], [0, 0], [0, 0], 75),  # no resource counted: std 0 before and after
        ([5, 0], [0, 0], [10, 0], 75),  # one resource: std 0
        ([75, 50], [0, 0], [100, 100], 68),
        ([125, 50], [50, 50], [100, 100], 62),  # fractions above 1 count as 1
    ],
)
def test_balanced_resource_scorer(requested: list[int], allocated: list[int], allocatable: list[int],
                                  want: int) -> None:
    assert balanced_resource_scorer(requested, allocated, allocatable) == want


def test_balanced_resource_score_more_than_two_resources() -> None:
    # fractions 3/3.5, 5/40, 4/8: std ~0.2989 -> int(70.1) = 70
    assert balanced_resource_score([3000, 5000, 4], [3500, 40000, 8]) == 70


def test_new_balanced_allocation_defaults_and_validation() -> None:
    pl = noderesources.new_balanced_allocation(None, FakeHandle())
    assert isinstance(pl, BalancedAllocation)
    assert pl.name == BALANCED_ALLOCATION_NAME == "NodeResourcesBalancedAllocation"
    assert [(r.name, r.weight) for r in pl.scorer.resources] == [("cpu", 1), ("memory", 1)]
    assert pl.score_extensions() is None
    with pytest.raises(ConfigError):
        noderesources.new_balanced_allocation(
            NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 2)]), FakeHandle())
