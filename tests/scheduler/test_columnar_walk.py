"""Whole scheduling runs with the columnar Filter/Score passes against the same runs per node.

The differential generator's clusters (every plugin, preemption, nominated nodes, several profiles) and
synthetic clusters larger than the sampling threshold are scheduled twice: the placements, messages,
per-node verdicts and scores (explain) must be identical.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.differential.generate import generate_case
from tests.differential.local import LocalCase
from wasmsched.config import load_config
from wasmsched.embedded.generate import generate
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler.algorithm import SchedulingAlgorithm
from wasmsched.scheduler.explain import explain_document
from wasmsched.simulator.simulation import Simulation


def _configure(algo: SchedulingAlgorithm, columnar: bool) -> None:
    algo.columnar = columnar
    algo.columnar_min_nodes = 0  # the differential clusters have 1-7 nodes


@pytest.mark.parametrize("mode", ["cycle", "run"])
@pytest.mark.parametrize("chunk", range(4))
def test_differential_cases_schedule_the_same_with_columnar_passes(mode: str, chunk: int) -> None:
    for seed in range(chunk * 25, chunk * 25 + 25):
        case = generate_case(seed)
        results = []
        for columnar in (False, True):
            local = LocalCase(case.objects, case.config)
            _configure(local.scheduler.algorithm, columnar)
            results.append(local.run(mode))
        assert results[0] == results[1], f"seed {seed}"


def _simulate(objects: dict[str, list[Any]], columnar: bool, seed: int) -> list[Any]:
    sim = Simulation(load_config(None), in_tree_registry(), seed=seed, explain=True)
    _configure(sim.scheduler.algorithm, columnar)
    sim.apply(objects)
    result = sim.run_until_quiet()
    sim.scheduler.close()
    return [(p.name, p.node, p.phase, p.message, p.attempts, explain_document(p.explain)) for p in result.pods]


@pytest.mark.parametrize(("nodes", "pods", "seed"), [(150, 250, 1), (230, 300, 2), (20, 420, 3)])
def test_generated_clusters_schedule_the_same_with_columnar_passes(nodes: int, pods: int, seed: int) -> None:
    # Mixed node shapes, tainted nodes, selectors, tolerations, spread constraints; the first two sample
    # nodes (numFeasibleNodesToFind), the last fills up, so nodes are rejected for resources and pods
    # stay pending.
    first = _simulate(generate(nodes, pods, seed), False, seed)
    second = _simulate(generate(nodes, pods, seed), True, seed)
    assert first == second
    assert any(p[2] == "Scheduled" for p in first)


@pytest.mark.parametrize(("nodes", "built"), [(5, False), (120, True)])
def test_simulation_builds_the_node_table_when_loading_a_big_cluster(nodes: int, built: bool) -> None:
    sim = Simulation(load_config(None), in_tree_registry())
    sim.apply(generate(nodes, 1))
    snap = sim.scheduler.snapshot
    assert snap.num_nodes() == nodes
    assert (snap._table is not None) == built
    sim.scheduler.close()


class _EveryNode:
    """Stands for a nominated-node set naming every node: the walk then filters each node with its
    nominated pods, as it did for all nodes whenever any pod was nominated."""

    def __contains__(self, name: object) -> bool:
        return True

    def __bool__(self) -> bool:
        return True


@pytest.mark.parametrize("mode", ["cycle", "run"])
def test_nodes_without_nominated_pods_filter_the_same_in_a_batch(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the nodes some pod is nominated to go through RunFilterPluginsWithNominatedPods; on the others
    # it adds no pod, so the batch gives the same verdicts.
    from wasmsched.scheduler.queue import Nominator

    seeds = [s for s in range(150) if generate_case(s).features & {"nominated_node", "preemption_scenario"}][:20]
    assert seeds
    for seed in seeds:
        case = generate_case(seed)
        results = []
        for every_node in (False, True):
            with monkeypatch.context() as m:
                if every_node:
                    m.setattr(Nominator, "nominated_node_names", lambda self: _EveryNode())
                local = LocalCase(case.objects, case.config)
                _configure(local.scheduler.algorithm, True)
                results.append(local.run(mode))
        assert results[0] == results[1], f"seed {seed}"
