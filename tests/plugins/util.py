"""Builders and checks shared by several plugin test files (kube's test_util.go and st wrappers)."""

from __future__ import annotations

from typing import Any

import numpy as np

from wasmsched.api.types import Node, Pod
from wasmsched.config.args import ResourceSpec
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import FilterPlugin, NodeBatch, NodeScore, ScorePlugin
from wasmsched.framework.nodetable import NodeColumns
from wasmsched.framework.status import Code, Status, not_success
from wasmsched.framework.types import NodeInfo
from wasmsched.testing.batch import batch_scores
from wasmsched.testing.builders import make_pod

# --- nodes and pods -------------------------------------------------------------------------------


def labeled_node(name: str, **labels: str) -> Node:
    """A node with just a name and labels (no hostname label, unlike testing.builders.make_node)."""
    n = Node()
    n.metadata.name = name
    n.metadata.labels.update(labels)
    return n


def resource_node(name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None = None) -> Node:
    """makeNode of noderesources/test_util.go: capacity = allocatable = cpu, memory and extended."""
    n = Node()
    n.metadata.name = name
    rl = {"cpu": f"{milli_cpu}m", "memory": str(memory), **{k: str(v) for k, v in (extended or {}).items()}}
    for k, v in rl.items():
        n.status.capacity[k].string = v
        n.status.allocatable[k].string = v
    return n


def request_pod(*requests: dict[str, str], node: str = "", name: str = "p") -> Pod:
    """st.MakePod().Node(node).Req(r1).Req(r2)...: one container per request map."""
    w = make_pod(name)
    if node:
        w.node(node)
    for r in requests:
        w.res(r)
    return w.obj()


def pods_on(spec: str, **labels: str) -> list[Pod]:
    """'node-a:2 node-b:1' -> pods p-a1, p-a2, p-b1 on those nodes with the labels."""
    out: list[Pod] = []
    for part in spec.split():
        n, cnt = part.split(":")
        out.extend(make_pod(f"p-{n[-1]}{i + 1}").labels(labels).node(n).obj() for i in range(int(cnt)))
    return out


def add_spread_constraints(p: Pod, *constraints: tuple[Any, ...]) -> Pod:
    """Topology spread constraints (maxSkew, key, when, exists-keys | None (nil selector)[, extra fields])."""
    for c in constraints:
        max_skew, key, when, exists = c[:4]
        extra: dict[str, Any] = c[4] if len(c) > 4 else {}
        tsc = p.spec.topologySpreadConstraints.add()
        tsc.maxSkew, tsc.topologyKey, tsc.whenUnsatisfiable = max_skew, key, when
        if exists is not None:
            tsc.labelSelector.SetInParent()
            for k in exists:
                r = tsc.labelSelector.matchExpressions.add()
                r.key, r.operator = k, "Exists"
        for k, v in extra.items():
            if isinstance(v, list):
                getattr(tsc, k).extend(v)
            else:
                setattr(tsc, k, v)
    return p


def fill_pod_affinity_term(t: Any, exprs: list[tuple[str, str, list[str]]], topology_key: str,
                           namespaces: list[str] | None = None) -> None:
    """A PodAffinityTerm's topologyKey, label selector (key, operator, values) and namespaces."""
    t.topologyKey = topology_key
    t.labelSelector.SetInParent()
    for k, op, vals in exprs:
        r = t.labelSelector.matchExpressions.add()
        r.key, r.operator = k, op
        r.values.extend(vals)
    if namespaces:
        t.namespaces.extend(namespaces)


# (name, resources, field of the error): NodeResourcesFit args with invalid resource weights.
INVALID_RESOURCE_WEIGHTS = [
    ("resource with negative weight", [ResourceSpec("memory", -1), ResourceSpec("cpu", 1)],
     "args.scoringStrategy.resources[0].weight"),
    ("resource with zero weight", [ResourceSpec("memory", 1), ResourceSpec("cpu", 0)],
     "args.scoringStrategy.resources[1].weight"),
    ("resource weight larger than MaxNodeScore", [ResourceSpec("memory", 1), ResourceSpec("cpu", 101)],
     "args.scoringStrategy.resources[1].weight"),
]


# --- scoring --------------------------------------------------------------------------------------


def score_each(pl: Any, state: CycleState, pod: Pod, infos: list[NodeInfo]) -> list[NodeScore]:
    """Score of every node, each a success; ScoreNodes must give the same scores."""
    got = []
    for ni in infos:
        score, st = pl.score(state, pod, ni)
        assert st is None
        got.append(NodeScore(ni.name, score))
    batch, st = batch_scores(pl, state, pod, infos)
    assert st is None
    assert batch == [s.score for s in got]
    return got


# --- batch forms against per-node forms (tests/plugins/test_batch_forms.py) ---------------------------


def _verdicts(got: dict[int, Status] | Any) -> dict[int, tuple[Code, list[str]]]:
    return {i: (st.code, list(st.reasons)) for i, st in got.items()}


def filter_agrees(pl: FilterPlugin, state: CycleState, pod: Pod, infos: list[NodeInfo],
                  columns: NodeColumns) -> None:
    """filter_batch, with the node table's rows and without, rejects the nodes `filter` rejects, with its
    statuses."""
    want = {}
    for i, ni in enumerate(infos):
        st = pl.filter(state, pod, ni)
        if not_success(st):
            want[i] = (st.code, list(st.reasons))
    for cols in (columns, None):
        assert _verdicts(pl.filter_batch(state, pod, NodeBatch(infos, cols))) == want, (pl.name, cols is not None)


def score_agrees(pl: ScorePlugin, state: CycleState, pod: Pod, infos: list[NodeInfo], columns: NodeColumns) -> None:
    """score_batch, with the node table's rows and without, gives `score`'s raw scores; normalize_score_batch,
    where it answers, what normalize_score makes of them."""
    want: list[int] = []
    for ni in infos:
        s, st = pl.score(state, pod, ni)
        assert st is None, (pl.name, st)
        want.append(s)
    for cols in (columns, None):
        got, st = pl.score_batch(state, pod, NodeBatch(infos, cols))
        assert st is None
        assert [int(s) for s in got] == want, (pl.name, cols is not None)
    ext = pl.score_extensions()
    if ext is None:
        return
    lst = [NodeScore(ni.name, s) for ni, s in zip(infos, want, strict=True)]
    assert ext.normalize_score(state, pod, lst) is None
    raw = np.array(want, dtype=np.int64)
    normalized = pl.normalize_score_batch(state, pod, raw)
    if normalized is not None:
        assert normalized.tolist() == [ns.score for ns in lst], pl.name
        assert raw.tolist() == want  # a new array: the raw scores stay as they were
