"""The node table (framework/nodetable.py) and the plugins' columnar forms against their per-node forms.

Random clusters include what the array passes must treat like the per-node code: nodes allocating no
cpu, memory or pods, over-committed nodes, extended resources, taints of every effect, unschedulable
nodes, images, and quantities too large for exact int64/float64 arithmetic (the passes must step
aside for them).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.config.args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
)
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeBatch
from wasmsched.framework.memo import MemoKey
from wasmsched.framework.nodetable import NodeColumns, NodeTable, ScoredNodes, rotated_rows
from wasmsched.framework.snapshot import Snapshot, new_snapshot
from wasmsched.framework.status import is_skip
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins.noderesources import BalancedAllocation, Fit
from wasmsched.plugins.noderesources.fit import PRE_FILTER_STATE_KEY
from wasmsched.scheduler.cache import Cache
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import FakeHandle

from ..plugins.util import filter_agrees, score_agrees

TAINTS = [("dedicated", "batch", "NoSchedule"), ("dedicated", "web", "NoSchedule"), ("gpu", "", "NoExecute"),
          ("spot", "true", "PreferNoSchedule"), ("zone", "a", "PreferNoSchedule"), ("num", "5", "NoSchedule")]
IMAGES = ["registry.k8s.io/pause:3.10", "nginx:1.27", "busybox"]
LABELS = {"zone": ["a", "b", "c"], "type": ["small", "big"], "gen": ["1", "3", "12", "x"]}
OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


def _expression(rng: random.Random) -> tuple[str, list[str], str]:
    key = rng.choice([*LABELS, "kubernetes.io/hostname", "missing"])
    op = rng.choice(OPERATORS)
    if op in ("Exists", "DoesNotExist"):
        return key, [], op
    if op in ("Gt", "Lt"):
        return key, [rng.choice(["2", "5", "x"])], op
    pool = LABELS.get(key, ["node-0001", "node-0003"])
    return key, rng.sample(pool, rng.randint(1, len(pool))), op


def add_node_affinity(rng: random.Random, w: Any) -> None:
    """A node selector, required terms (some with matchFields), preferred terms, at random."""
    if rng.random() < 0.3:
        key = rng.choice(list(LABELS))
        w.node_selector({key: rng.choice(LABELS[key])})
    if rng.random() < 0.3:
        for _ in range(rng.randint(1, 2)):
            w.node_affinity_in(*_expression(rng))
        if rng.random() < 0.2:
            terms = w.pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
            r = terms.nodeSelectorTerms.add().matchFields.add()
            r.key, r.operator = "metadata.name", "In"
            r.values.append("node-0002")
    for _ in range(rng.choice([0, 0, 1, 3])):
        key, values, op = _expression(rng)
        w.preferred_node_affinity(rng.randint(1, 100), key, values, op)


def _quantity(rng: random.Random, choices: list[str]) -> str | None:
    return rng.choice([*choices, None])


def random_node(rng: random.Random, i: int) -> Node:
    w = make_node(f"node-{i:04d}")
    resources = {
        "cpu": _quantity(rng, ["0", "500m", "1", "4", "32", "1001m"]),
        "memory": _quantity(rng, ["0", "1Gi", "4Gi", "256Gi", "1000"]),
        "pods": _quantity(rng, ["0", "1", "3", "110"]),
        "ephemeral-storage": _quantity(rng, ["0", "10Gi"]) if rng.random() < 0.3 else None,
        "example.com/gpu": _quantity(rng, ["0", "2"]) if rng.random() < 0.2 else None,
    }
    if rng.random() < 0.05:
        resources["memory"] = rng.choice(["8E", "9007199254740993"])  # beyond 2**53: not exact
    w.res({k: v for k, v in resources.items() if v is not None})
    for key, values in LABELS.items():
        if rng.random() < 0.7:
            w.label(key, rng.choice(values))
    for key, value, effect in rng.sample(TAINTS, rng.choice([0, 0, 0, 1, 2])):
        w.taint(key, value, effect)
    if rng.random() < 0.1:
        w.unschedulable()
    if rng.random() < 0.3:
        w.image(rng.choice([0, 50 * 1024 * 1024, 900 * 1024 * 1024]), *rng.sample(IMAGES, rng.randint(1, 2)))
    return w.obj()


def random_pod(rng: random.Random, name: str, node: str = "") -> Pod:
    w = make_pod(name)
    if node:
        w.node(node)
    requests = {
        "cpu": _quantity(rng, ["0", "100m", "1", "3"]),
        "memory": _quantity(rng, ["0", "500Mi", "2Gi"]),
        "ephemeral-storage": "1Gi" if rng.random() < 0.1 else None,
        "example.com/gpu": "1" if rng.random() < 0.1 else None,
    }
    w.container(rng.choice(IMAGES), "c0", **{k.replace("-", "_"): v for k, v in requests.items() if v is not None})
    if rng.random() < 0.2:
        w.container(rng.choice(IMAGES), "c1")  # no requests: the non-zero defaults
    for key, value, effect in rng.sample(TAINTS, rng.choice([0, 0, 1, 2])):
        w.toleration(key, value, rng.choice([effect, ""]), rng.choice(["Equal", "Exists"]))
    if rng.random() < 0.05:
        w.toleration("node.kubernetes.io/unschedulable", "", "NoSchedule", "Exists")
    if not node:
        add_node_affinity(rng, w)
    return w.obj()


def random_cluster(seed: int, n: int) -> tuple[Snapshot, random.Random]:
    rng = random.Random(seed)
    nodes = [random_node(rng, i) for i in range(n)]
    running = [random_pod(rng, f"run-{j}", rng.choice(nodes).metadata.name) for j in range(n * 2)]
    return new_snapshot(running, nodes), rng


def random_rows(rng: random.Random, n: int) -> np.ndarray:
    """The rotated walk order, or a random subset (PreFilter-narrowed, or the feasible nodes)."""
    if rng.random() < 0.5:
        return rotated_rows(n, rng.randrange(n))
    return np.array(sorted(rng.sample(range(n), rng.randint(1, n))), dtype=np.intp)


def _added_affinity() -> NodeAffinityArgs:
    w = make_pod("template").node_affinity_in("type", ["big"], "NotIn").preferred_node_affinity(7, "zone", ["a"])
    return NodeAffinityArgs(added_affinity=w.obj().spec.affinity.nodeAffinity)


AFFINITY_ARGS = [NodeAffinityArgs(), _added_affinity()]

FIT_ARGS = [
    NodeResourcesFitArgs(),
    NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(MOST_ALLOCATED, [ResourceSpec("cpu", 1),
                                                                           ResourceSpec("memory", 1)])),
    NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(LEAST_ALLOCATED, [ResourceSpec("cpu", 3),
                                                                            ResourceSpec("memory", 7)])),
    NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(MOST_ALLOCATED, [ResourceSpec("cpu", 2),
                                                                           ResourceSpec("memory", 5)])),
]


# The plugins' columnar answers are compared with their per-node forms in tests/plugins/test_batch_forms.py.


def test_irregular_values_leave_the_resource_passes_to_the_per_node_forms() -> None:
    big = make_node("big").res({"cpu": "4", "memory": "8E", "pods": "110"}).obj()
    small = make_node("small").res({"cpu": "4", "memory": "8Gi", "pods": "110"}).obj()
    snap = new_snapshot([], [big, small])
    table = snap.node_table()
    assert not table.regular() and table.irregular.tolist() == [True, False]
    pod = make_pod("p").req(cpu="1", memory="1Gi").obj()
    state = CycleState()
    fit = Fit(NodeResourcesFitArgs(), FakeHandle(snapshot=snap))
    fit.pre_filter(state, pod, snap.list())
    fit.pre_score(state, pod, snap.list())
    cols = NodeColumns(table, np.arange(2, dtype=np.intp))
    assert fit._fits_columns(state.read(PRE_FILTER_STATE_KEY), cols) is None
    scores, st = fit.score_batch(state, pod, NodeBatch(snap.list(), cols))
    assert st is None and [int(s) for s in scores] == [fit.score(state, pod, ni)[0] for ni in snap.list()]


def _table_state(t: NodeTable) -> tuple[Any, ...]:
    labels = []
    for key in LABELS:
        ids, values = t.label_ids(key)
        labels.append([values[i] if i >= 0 else None for i in ids.tolist()])
    images = []
    for name in IMAGES:
        ids, states = t.image_ids(name)
        images.append([states[i] if i >= 0 else None for i in ids.tolist()])
    return (t.values.tolist(), t.irregular.tolist(), t.unschedulable.tolist(), t.has_images.tolist(),
            [t.taint_lists[i] for i in t.taint_id.tolist()], t.irregular_rows, t.unschedulable_rows,
            t.tainted_rows, t.image_rows, labels, images)


def test_cache_keeps_the_table_in_step_with_the_snapshot() -> None:
    rng = random.Random(7)
    cache = Cache()
    snap = Snapshot()
    nodes = [random_node(rng, i) for i in range(12)]
    for n in nodes:
        cache.add_node(n)
    pods: list[Pod] = []
    cache.update_snapshot(snap)
    table = snap.node_table()
    table.label_ids("zone")  # label and image columns kept in step too
    table.image_ids("nginx:1.27")
    for step in range(60):
        action = rng.random()
        if action < 0.5 or not pods:
            pod = random_pod(rng, f"p{step}", rng.choice(nodes).metadata.name)
            if rng.random() < 0.3:
                pod.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.add(
                    topologyKey="kubernetes.io/hostname")
            cache.add_pod(pod)
            pods.append(pod)
        elif action < 0.8:
            cache.remove_pod(pods.pop(rng.randrange(len(pods))))
        else:
            i = rng.randrange(len(nodes))
            new = random_node(rng, i)
            cache.update_node(nodes[i], new)
            nodes[i] = new
        cache.update_snapshot(snap)
        current = snap.node_table()
        fresh = NodeTable(snap.list())
        assert _table_state(current) == _table_state(fresh), step
    # Rows were updated in place while the node order stayed (label changes reorder: a new table).
    assert table is snap.node_table() or table.infos is not snap.list()


def test_scored_nodes_reads_like_node_plugin_scores() -> None:
    scored = ScoredNodes([NodeInfo(make_node(n).obj()) for n in "abc"], ("P1", "P2"),
                         [np.array([1, 5, 5], dtype=np.int64), np.array([4, 0, 0], dtype=np.int64)])
    assert len(scored) == 3
    assert scored.totals.tolist() == [5, 5, 5]
    assert scored.best() == [0, 1, 2]
    b = scored[1]
    assert (b.name, b.total_score, [(s.name, s.score) for s in b.scores]) == ("b", 5, [("P1", 5), ("P2", 0)])
    assert [s.name for s in scored[-2:]] == ["b", "c"]
    with pytest.raises(IndexError):
        scored[3]


def test_node_infos_of_rows() -> None:
    snap, _ = random_cluster(3, 10)
    table = snap.node_table()
    assert table.infos is snap.list() and len(table) == 10
    assert rotated_rows(5, 2).tolist() == [2, 3, 4, 0, 1]
    for start in (0, 3, 9):
        view = table.rotated_rows(start)
        assert view.tolist() == rotated_rows(10, start).tolist() and not view.flags.writeable
    ni: NodeInfo = table.infos[3]
    assert snap.positions[ni.name] == 3


KEY: MemoKey[int] = MemoKey("pods")


def test_memoized_rows_recomputes_only_the_rows_set_since() -> None:
    snap, _ = random_cluster(5, 100)
    table = snap.node_table()
    computed: list[list[int]] = []
    one_by_one: list[str] = []

    def compute(rows: np.ndarray) -> np.ndarray:
        computed.append(rows.tolist())
        return np.array([len(table.infos[r].pods) for r in rows.tolist()], dtype=np.int64)

    def compute_row(ni: NodeInfo) -> int:
        one_by_one.append(ni.name)
        return len(ni.pods)

    rows = np.array([3, 1, 2], dtype=np.intp)
    expected = [len(snap.list()[r].pods) for r in (3, 1, 2)]
    assert table.memoized_rows(KEY, (), rows, compute, compute_row).tolist() == expected
    assert computed == [list(range(100))]
    table.memoized_rows(KEY, (), rows, compute, compute_row)
    assert len(computed) == 1 and not one_by_one  # nothing changed: nothing computed
    ni = snap.list()[2].clone()
    ni.add_pod(make_pod("extra").node(ni.name).obj())
    snap.replace(ni)
    assert table.memoized_rows(KEY, (), rows, compute, compute_row).tolist()[2] == len(ni.pods)
    assert one_by_one == [ni.name] and len(computed) == 1
    for i in range(70):  # more changed rows than are recomputed one by one: one array pass
        c = snap.list()[i].clone()
        c.add_pod(make_pod(f"more-{i}").node(c.name).obj())
        snap.replace(c)
    every = np.arange(100, dtype=np.intp)
    assert table.memoized_rows(KEY, (), every, compute, compute_row).tolist() == [len(x.pods) for x in snap.list()]
    assert computed[-1] == list(range(70))


@pytest.mark.parametrize("seed", range(6))
def test_memoized_resource_scores_follow_the_cache(seed: int) -> None:
    """Fit's memoized columnar verdicts and Fit's and BalancedAllocation's memoized columnar scores equal the
    per-node forms while pods come and go: the memo takes every row change (one by one, and in an array
    pass)."""
    rng = random.Random(seed)
    cache = Cache()
    snap = Snapshot()
    nodes = [random_node(rng, i) for i in range(40)]
    for n in nodes:
        cache.add_node(n)
    cache.update_snapshot(snap)
    handle = FakeHandle(snapshot=snap)
    shapes = [random_pod(rng, f"shape-{k}") for k in range(3)]
    # The same plugins every cycle, as a profile has them (their memo entries are per plugin).
    plugins = [Fit(args, handle) for args in FIT_ARGS] + [BalancedAllocation(NodeResourcesBalancedAllocationArgs(),
                                                                             handle)]
    pods: list[Pod] = []
    for step in range(120):
        burst = rng.choice([1, 1, 1, 5, 30, 80])  # pods bound between two cycles
        for k in range(burst):
            if rng.random() < 0.7 or not pods:
                pod = random_pod(rng, f"p{step}-{k}", rng.choice(nodes).metadata.name)
                cache.add_pod(pod)
                pods.append(pod)
            else:
                cache.remove_pod(pods.pop(rng.randrange(len(pods))))
        cache.update_snapshot(snap)
        incoming = rng.choice(shapes)
        state = CycleState()
        for pl in plugins:
            if isinstance(pl, Fit):
                pl.pre_filter(state, incoming, snap.list())
                _agrees(filter_agrees, pl, state, incoming, snap, random_rows(rng, len(nodes)))
            if is_skip(pl.pre_score(state, incoming, snap.list())):
                continue
            _agrees(score_agrees, pl, state, incoming, snap, random_rows(rng, len(nodes)))


def _agrees(check: Any, pl: Any, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> None:
    check(pl, state, pod, [snap.list()[r] for r in rows.tolist()], NodeColumns(snap.node_table(), rows))


def test_resource_scores_have_one_cache_the_node_tables() -> None:
    """Fit's and BalancedAllocation's scores for a pod shape are kept in one place, the node table: scoring
    with the nodes' rows fills the table's memo, and scoring with or without them leaves nothing in the
    NodeInfos' memos but the node facts (no second cache to keep in step)."""
    rng = random.Random(7)
    nodes = [make_node(f"n{i}").capacity(cpu=str(rng.choice([2, 4, 32])), memory=f"{rng.choice([4, 64])}Gi",
                                         pods="110").obj() for i in range(60)]
    running = [make_pod(f"run-{j}").req(cpu=f"{rng.randrange(1, 900)}m", memory=f"{rng.randrange(1, 900)}Mi")
               .node(f"n{rng.randrange(60)}").obj() for j in range(120)]
    snap = new_snapshot(running, nodes)
    handle = FakeHandle(snapshot=snap)
    plugins = [Fit(args, handle) for args in FIT_ARGS] + [BalancedAllocation(NodeResourcesBalancedAllocationArgs(),
                                                                             handle)]
    table = snap.node_table()
    assert table.regular()
    before = {ni.name: set(ni.memo()) for ni in snap.list()}
    for pod in (random_pod(rng, f"p{i}") for i in range(5)):
        state = CycleState()
        for pl in plugins:
            if is_skip(pl.pre_score(state, pod, snap.list())):
                continue
            rows = random_rows(rng, len(snap.list()))
            _agrees(score_agrees, pl, state, pod, snap, rows)
    assert table._row_memo, "the columnar scores are kept in the node table"
    assert {ni.name: set(ni.memo()) for ni in snap.list()} == before
