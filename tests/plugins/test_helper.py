"""Ports of helper/normalize_score_test.go, taint_test.go and noderesources' TestBrokenLinearFunction."""

from __future__ import annotations

import pytest

from wasmsched.api.types import Taint
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import MAX_NODE_SCORE, NodeScore
from wasmsched.framework.memo import MemoKey
from wasmsched.framework.types import PodInfo
from wasmsched.plugins.helper import (
    FunctionShapePoint,
    build_broken_linear_function,
    default_normalize_score,
    do_not_schedule_taints_filter_func,
)
from wasmsched.plugins.helper.gomath import div_trunc
from wasmsched.plugins.helper.podmemo import pod_memoized
from wasmsched.testing.batch import batch_scores
from wasmsched.testing.builders import make_pod


@pytest.mark.parametrize(
    ("reverse", "scores", "expected"),
    [
        (False, [1, 2, 3, 4], [25, 50, 75, 100]),
        (True, [1, 2, 3, 4], [75, 50, 25, 0]),
        (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
        (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
        (False, [1, 1, 1, 1], [100, 100, 100, 100]),
        (False, [1000, 1, 1, 1], [100, 0, 0, 0]),
        (True, [0, 1, 1, 1], [100, 0, 0, 0]),
        # all zero: reverse gives everyone the max, forward leaves zeros
        (True, [0, 0], [100, 100]),
        (False, [0, 0], [0, 0]),
    ],
)
def test_default_normalize_score(reverse: bool, scores: list[int], expected: list[int]) -> None:
    node_scores = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    assert default_normalize_score(MAX_NODE_SCORE, reverse, node_scores) is None
    assert [s.score for s in node_scores] == expected


_SHAPE_1 = [FunctionShapePoint(10, 1), FunctionShapePoint(90, 9)]
_SHAPE_2 = [FunctionShapePoint(0, 2), FunctionShapePoint(40, 10), FunctionShapePoint(100, 0)]
_SHAPE_3 = [FunctionShapePoint(0, 2), FunctionShapePoint(40, 2), FunctionShapePoint(100, 2)]


@pytest.mark.parametrize(
    ("shape", "p", "expected"),
    [
        *[(_SHAPE_1, p, e) for p, e in [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2),
                                         (89, 8), (90, 9), (99, 9), (100, 9), (110, 9)]],
        *[(_SHAPE_2, p, e) for p, e in [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5),
                                         (100, 0), (110, 0)]],
        *[(_SHAPE_3, p, e) for p, e in [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2),
                                         (100, 2), (110, 2)]],
        # Go integer division truncates toward zero on the falling segment: 10 + (-100 / 60) = 9.
        (_SHAPE_2, 50, 9),
    ],
)
def test_broken_linear_function(shape: list[FunctionShapePoint], p: int, expected: int) -> None:
    assert build_broken_linear_function(shape)(p) == expected


@pytest.mark.parametrize(
    ("effect", "expected"),
    [("NoSchedule", True), ("NoExecute", True), ("PreferNoSchedule", False)],
)
def test_do_not_schedule_taints_filter_func(effect: str, expected: bool) -> None:
    assert do_not_schedule_taints_filter_func()(Taint(effect=effect)) is expected


@pytest.mark.parametrize(("a", "b", "q"), [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, -5, 0)])
def test_div_trunc(a: int, b: int, q: int) -> None:
    assert div_trunc(a, b) == q


COUNTS: MemoKey[list[int]] = MemoKey("calls")


def test_pod_memoized_only_for_the_cycle_pod_info_pod() -> None:
    pod = make_pod("p").obj()
    other = make_pod("p").obj()
    calls: list[object] = []

    def compute(p: object) -> list[int]:
        calls.append(p)
        return [len(calls)]

    state = CycleState()
    assert pod_memoized(state, pod, COUNTS, compute) == [1]  # no PodInfo: computed every time
    state.pod_info = PodInfo(pod)
    assert pod_memoized(state, pod, COUNTS, compute) == [2]
    assert pod_memoized(state, pod, COUNTS, compute) == [2]  # memoized in the PodInfo
    assert pod_memoized(state.clone(), pod, COUNTS, compute) == [2]  # preemption's clones share it
    assert pod_memoized(state, other, COUNTS, compute) == [3]  # another pod object: not the PodInfo's
    assert state.pod_info.memo()[COUNTS] == [2]
    # Keys are their owners': another key of the same name is another entry.
    assert pod_memoized(state, pod, MemoKey("calls"), compute) == [4]


@pytest.mark.parametrize("name", ["VolumeBinding", "DynamicResources"])
def test_plugins_kube_scores_for_every_pod_answer_zeros_at_once_for_a_pod_without_claims(name: str) -> None:
    """kube runs VolumeBinding's (StorageCapacityScoring) and DynamicResources' Score for every pod; for a
    pod without claims every node scores 0 — one columnar answer, the same as the per-node form."""
    import numpy as np

    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interface import NodeBatch
    from wasmsched.framework.nodetable import NodeColumns, NodeTable
    from wasmsched.framework.status import is_skip
    from wasmsched.plugins.registry import in_tree_registry
    from wasmsched.testing.builders import make_node, make_pod
    from wasmsched.testing.fake_handle import FakeHandle

    nodes = [make_node(f"n{i}").capacity(cpu="4", pods="10").obj() for i in range(3)]
    handle = FakeHandle(nodes=nodes)
    pl = in_tree_registry()[name](None, handle)
    pod = make_pod("p").obj()
    state = CycleState()
    infos = handle.snapshot_shared_lister().node_info_list
    _, st = pl.pre_filter(state, pod, infos)  # type: ignore[attr-defined]
    assert is_skip(st)
    per_node = [pl.score(state, pod, ni)[0] for ni in infos]  # type: ignore[attr-defined]
    assert per_node == [0, 0, 0]
    assert batch_scores(pl, state, pod, infos) == ([0, 0, 0], None)
    cols = NodeColumns(NodeTable(list(infos)), np.arange(len(infos), dtype=np.intp))
    got, st = pl.score_batch(state, pod, NodeBatch(infos, cols))  # type: ignore[attr-defined]
    assert st is None and got.tolist() == [0, 0, 0]
    ext = pl.score_extensions()  # type: ignore[attr-defined]
    if ext is not None:
        assert pl.normalize_score_batch(state, pod, got).tolist() == [0, 0, 0]  # type: ignore[attr-defined]
