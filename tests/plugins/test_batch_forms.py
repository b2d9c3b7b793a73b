"""Every in-tree batch form against its plugin's per-node form (the reference semantics), on random clusters
of many node shapes: filter_batch against filter node by node, score_batch against score node by node, and
normalize_score_batch against normalize_score. Each batch form is asked with the nodes' rows in the node
table (its columnar answer, where it has one) and without them (its per-node loop), on the whole walk
order or a random subset of the nodes, as the scheduler asks them."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from wasmsched.api.types import Pod
from wasmsched.config.args import (
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import FilterPlugin, Plugin, ScorePlugin
from wasmsched.framework.nodetable import NodeColumns
from wasmsched.framework.snapshot import Snapshot, new_snapshot
from wasmsched.framework.status import is_skip
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import interpodaffinity, podtopologyspread
from wasmsched.plugins.imagelocality import ImageLocality
from wasmsched.plugins.nodeaffinity import NodeAffinity
from wasmsched.plugins.nodename import NodeName
from wasmsched.plugins.nodeports import NodePorts
from wasmsched.plugins.noderesources import BalancedAllocation, Fit
from wasmsched.plugins.nodeunschedulable import NodeUnschedulable
from wasmsched.plugins.tainttoleration import TaintToleration
from wasmsched.testing.builders import PodWrapper
from wasmsched.testing.fake_handle import FakeHandle

from ..framework.test_nodetable import AFFINITY_ARGS, FIT_ARGS, random_node, random_pod, random_rows
from .util import filter_agrees, score_agrees

RTC_ARGS = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(
    REQUESTED_TO_CAPACITY_RATIO, [ResourceSpec("cpu", 1), ResourceSpec("memory", 2)],
    RequestedToCapacityRatioParam([UtilizationShapePoint(0, 0), UtilizationShapePoint(60, 8),
                                   UtilizationShapePoint(100, 10)])))
TOPOLOGY_KEYS = ["zone", "type", "kubernetes.io/hostname"]


def _with_pod_terms(rng: random.Random, pod: Pod) -> Pod:
    """Labels, host ports, pod (anti-)affinity and topology spread, at random: what NodePorts,
    InterPodAffinity and PodTopologySpread read."""
    pod.metadata.labels["app"] = rng.choice(["a", "b", "c"])
    if rng.random() < 0.3:
        c = pod.spec.containers[0]
        port = c.ports.add()
        port.containerPort = port.hostPort = rng.choice([80, 443, 8080])
        port.protocol = rng.choice(["TCP", "UDP"])
    w = object.__new__(PodWrapper)  # the wrapper's methods on a pod already made
    w.pod = pod
    app = {"app": rng.choice(["a", "b", "c"])}
    for add in (w.pod_affinity, w.pod_anti_affinity):
        if rng.random() < 0.15:
            add(rng.choice(TOPOLOGY_KEYS), app)
    for add_preferred in (w.preferred_pod_affinity, w.preferred_pod_anti_affinity):
        if rng.random() < 0.2:
            add_preferred(rng.randint(1, 100), rng.choice(TOPOLOGY_KEYS), app)
    if rng.random() < 0.3:
        w.spread_constraint(rng.randint(1, 3), rng.choice(TOPOLOGY_KEYS),
                            rng.choice(["DoNotSchedule", "ScheduleAnyway"]), app)
    return pod


def _cluster(seed: int) -> tuple[Snapshot, random.Random, int]:
    rng = random.Random(seed)
    n = rng.randint(1, 80)
    nodes = [random_node(rng, i) for i in range(n)]
    running = [_with_pod_terms(rng, random_pod(rng, f"run-{j}", rng.choice(nodes).metadata.name))
               for j in range(n * 2)]
    return new_snapshot(running, nodes), rng, n


def _scored(pl: Any, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> bool:
    """PreScore ran and did not skip the plugin."""
    st = pl.pre_score(state, pod, nodes)
    return not is_skip(st) and st is None


def _prefiltered(pl: Any, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> bool:
    """PreFilter ran and left Filter something to decide."""
    _, st = pl.pre_filter(state, pod, nodes)
    return st is None


CASES: list[tuple[str, Callable[[random.Random, FakeHandle], Plugin]]] = [
    ("Fit", lambda rng, h: Fit(rng.choice([*FIT_ARGS, RTC_ARGS]), h)),
    ("BalancedAllocation", lambda rng, h: BalancedAllocation(NodeResourcesBalancedAllocationArgs(), h)),
    ("TaintToleration", lambda rng, h: TaintToleration(h)),
    ("NodeUnschedulable", lambda rng, h: NodeUnschedulable()),
    ("NodeName", lambda rng, h: NodeName()),
    ("ImageLocality", lambda rng, h: ImageLocality(h)),
    ("NodeAffinity", lambda rng, h: NodeAffinity(rng.choice(AFFINITY_ARGS), h)),
    ("NodePorts", lambda rng, h: NodePorts()),
    ("InterPodAffinity", lambda rng, h: interpodaffinity.new(None, h)),
    ("PodTopologySpread", lambda rng, h: podtopologyspread.new(None, h)),
]


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize(("name", "make"), CASES, ids=[c[0] for c in CASES])
def test_batch_forms_equal_per_node_forms(name: str, make: Callable[[random.Random, FakeHandle], Plugin],
                                         seed: int) -> None:
    snap, rng, n = _cluster(seed)
    handle = FakeHandle(snapshot=snap)
    nodes = snap.list()
    asked = 0
    for k in range(60):
        if asked >= 12:
            break
        pod = _with_pod_terms(rng, random_pod(rng, f"incoming-{k}"))
        if rng.random() < 0.1:
            pod.spec.nodeName = f"node-{rng.randrange(n):04d}"
        rows = random_rows(rng, n)
        infos = [nodes[r] for r in rows.tolist()]
        columns = NodeColumns(snap.node_table(), rows)
        pl = make(rng, handle)
        state = CycleState()
        if isinstance(pl, FilterPlugin) and (not hasattr(pl, "pre_filter") or _prefiltered(pl, state, pod, nodes)):
            filter_agrees(pl, state, pod, infos, columns)
            asked += 1
        if isinstance(pl, ScorePlugin) and (not hasattr(pl, "pre_score") or _scored(pl, state, pod, infos)):
            score_agrees(pl, state, pod, infos, columns)
            asked += 1
    assert asked, f"{name} was never asked"
