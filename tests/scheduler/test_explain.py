"""--explain data of a cycle (CycleExplain): PreFilter's outcome, a verdict for the nodes the cycle decided on,
the best nodes; and the lowest-name tie-break the differential tests use."""

from __future__ import annotations

import copy

from wasmsched.api.types import Node, Pod
from wasmsched.config import config_from_dict
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler.algorithm import CycleExplain
from wasmsched.simulator.simulation import Simulation
from wasmsched.testing.builders import make_node, make_pod

DEFAULT = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _explain(nodes: list[Node], pods: list[Pod]) -> dict[str, CycleExplain | None]:
    sim = Simulation(config_from_dict(DEFAULT), in_tree_registry(), explain=True)
    sim.apply({"Node": nodes, "Pod": pods})
    result = sim.run_until_quiet()
    sim.scheduler.close()
    return {p.name: p.explain for p in result.pods}


def test_nodes_prefilter_leaves_out_have_its_status() -> None:
    nodes = [make_node(n).capacity(cpu="2", memory="4Gi", pods="10").obj() for n in ("a", "b", "c")]
    pod = make_pod("p").req(cpu="1").obj()
    # matchFields metadata.name: NodeAffinity's PreFilterResult names node a only
    term = pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.add()
    term.matchFields.add(key="metadata.name", operator="In", values=["a"])
    ex = _explain(nodes, [pod])["p"]
    assert ex is not None
    assert ex.pre_filter_nodes == {"a"}
    assert ex.filter["a"] is None
    for n in ("b", "c"):
        st = ex.filter[n]
        assert st is not None and st.reasons == ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]
    assert ex.best() == ["a"]


def test_nodes_the_walk_did_not_reach_have_no_verdict() -> None:
    # 250 nodes: kube's sampling looks for 120 feasible nodes and stops; the rest get no verdict.
    nodes = [make_node(f"n{i:03d}").capacity(cpu="2", memory="4Gi", pods="10").obj() for i in range(250)]
    ex = _explain(nodes, [make_pod("p").req(cpu="1").obj()])["p"]
    assert ex is not None
    assert len(ex.filter) == 120
    assert all(st is None for st in ex.filter.values())


def test_lowest_name_tie_break_picks_the_lowest_of_equal_nodes() -> None:
    nodes = [make_node(n).capacity(cpu="2", memory="4Gi", pods="10").obj() for n in ("c", "a", "b")]
    for seed in range(5):
        sim = Simulation(config_from_dict(DEFAULT), in_tree_registry(), seed=seed)
        sim.scheduler.algorithm.rng = None  # what SchedulerOptions.lowest_name_tie_break sets up
        sim.apply({"Node": copy.deepcopy(nodes), "Pod": [make_pod("p").req(cpu="1").obj()]})
        result = sim.run_until_quiet()
        sim.scheduler.close()
        assert result.pods[0].node == "a"
