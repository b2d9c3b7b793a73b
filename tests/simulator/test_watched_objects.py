"""simulate's watched objects (docs/abi.md §14.2): the manifests' objects of a resource a plugin declared
(a CRD's, without a schema, and a Namespace) reach the plugin through the Handle; kinds map to resources
by a CustomResourceDefinition in the manifests or kube's UnsafeGuessKindToResource; undeclared kinds are
skipped with a warning as before; and changes are cluster events `<resource>.<version>.<group>`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.watch_helpers import NAMESPACES, NRT, NRT_CRD, PLUGIN, nrt, topology_factory
from wasmsched.api.gvr import GroupVersionResource
from wasmsched.api.manifest import ManifestError, load_text
from wasmsched.cli import simulate as simulate_cli
from wasmsched.cli.main import main
from wasmsched.config import config_from_dict
from wasmsched.framework.events import ActionType, ClusterEvent
from wasmsched.framework.watched import ResourceNotWatchedError
from wasmsched.plugins.registry import Registry, in_tree_registry
from wasmsched.simulator.simulation import Simulation

NODES = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {team: a}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team-a}
spec: {containers: [{name: c, image: x}]}
"""


def config() -> Any:
    return config_from_dict({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": [{"name": PLUGIN}]}}}],
    })


def registry() -> Registry:
    reg = in_tree_registry()
    reg.register(PLUGIN, topology_factory)
    return reg


def docs(*objs: dict[str, Any]) -> str:
    return "\n---\n".join(yaml.safe_dump(o) for o in objs)


def simulate(text: str) -> tuple[Simulation, Any, list[str]]:
    loaded = load_text(NODES + "\n---\n" + text)
    sim = Simulation(config(), registry())
    taken = {id(u) for u in sim.load_watched(loaded.unstructured)}
    warnings = [u.warning for u in loaded.unstructured if id(u) not in taken]
    sim.apply(loaded.by_kind)
    return sim, sim.run_until_quiet(), warnings


def test_a_crds_objects_and_namespaces_reach_the_plugin() -> None:
    sim, result, warnings = simulate(docs(NRT_CRD, nrt("n1", False), nrt("n2", True)))
    try:
        (p,) = result.pods
        assert (p.phase, p.node) == ("Scheduled", "n2"), p
        assert warnings == []
        store = sim.scheduler.watched
        assert [o["metadata"]["name"] for o in store.objects(NRT)] == ["n1", "n2"]
        raw = store.get(NRT, "", "n2")
        assert raw is not None
        obj = json.loads(raw)
        assert obj["apiVersion"] == "topology.node.k8s.io/v1alpha2" and obj["kind"] == "NodeResourceTopology"
        assert obj["zones"] == [{"name": "node-0", "type": "Node"}] and obj["metadata"]["uid"]
        # The Namespace is a kind the embedded cluster holds: its JSON as the API server serves it.
        (ns,) = [json.loads(b) for b in store.list(NAMESPACES, label_selector="team=a")]
        assert ns["apiVersion"] == "v1" and ns["kind"] == "Namespace" and ns["metadata"]["name"] == "team-a"
        assert ns["metadata"]["resourceVersion"]
    finally:
        sim.scheduler.close()


def test_without_a_crd_the_resource_is_kubes_guess_of_the_kind() -> None:
    sim, result, warnings = simulate(docs(nrt("n1", True), nrt("n2", False)))
    try:
        assert result.pods[0].node == "n1" and warnings == []
    finally:
        sim.scheduler.close()


def test_a_crd_in_the_manifests_names_the_plural_and_the_scope() -> None:
    crd = json.loads(json.dumps(NRT_CRD))
    crd["spec"]["names"] = {"kind": "Topo", "plural": "noderesourcetopologies"}  # not what a guess gives
    crd["spec"]["scope"] = "Cluster"
    obj = {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "Topo",
           "metadata": {"name": "n2", "namespace": "dropped"}, "ok": True}
    sim, result, warnings = simulate(docs(crd, obj))
    try:
        assert result.pods[0].node == "n2" and warnings == []
        assert "namespace" not in sim.scheduler.watched.objects(NRT)[0]["metadata"]
    finally:
        sim.scheduler.close()


def test_undeclared_kinds_are_still_skipped_with_a_warning() -> None:
    other = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    sim, result, warnings = simulate(docs(nrt("n2", True), other, {"apiVersion": "example.com/v1", "kind": "Gadget"}))
    try:
        assert result.pods[0].node == "n2"
        assert [w.rsplit(": ", 1)[1] for w in warnings] == ["unsupported kind example.com/v1 Widget, skipped",
                                                           "unsupported kind example.com/v1 Gadget, skipped"]
        with pytest.raises(ResourceNotWatchedError):
            sim.scheduler.watched.list(GroupVersionResource("example.com", "v1", "widgets"))
    finally:
        sim.scheduler.close()


@pytest.mark.parametrize(("obj", "error"), [
    ({"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology"},
     "<string>: document 5 (NodeResourceTopology): metadata: required field is missing"),
    ({"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology", "metadata": {"labels": {}}},
     "<string>: document 5 (NodeResourceTopology): metadata.name: Required value: name is required"),
])
def test_a_declared_kinds_object_needs_a_name(obj: dict[str, Any], error: str) -> None:
    loaded = load_text(NODES + "\n---\n" + docs(obj))
    sim = Simulation(config(), registry())
    try:
        with pytest.raises(ManifestError) as e:
            sim.load_watched(loaded.unstructured)
        assert str(e.value) == error
    finally:
        sim.scheduler.close()


def test_a_declared_kinds_object_defined_twice_is_refused() -> None:
    loaded = load_text(NODES + "\n---\n" + docs(nrt("n1", True), nrt("n1", False)))
    sim = Simulation(config(), registry())
    try:
        with pytest.raises(ManifestError, match=r'document 6 \(NodeResourceTopology n1\): noderesourcetopologies'
                                                r'.topology.node.k8s.io "n1" already exists \(first defined in '
                                                r"<string>: document 5\)"):
            sim.load_watched(loaded.unstructured)
    finally:
        sim.scheduler.close()


def test_simulate_cli_reads_a_crds_objects_and_drops_their_warnings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(simulate_cli, "in_tree_registry", registry)
    (tmp_path / "cluster.yaml").write_text(NODES + "\n---\n" + docs(NRT_CRD, nrt("n2", True)) + "\n---\n"
                                           + docs({"apiVersion": "example.com/v1", "kind": "Widget",
                                                   "metadata": {"name": "w"}}))
    cfg = tmp_path / "scheduler.yaml"
    cfg.write_text(yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                   "profiles": [{"schedulerName": "default-scheduler",
                                                 "plugins": {"multiPoint": {"enabled": [{"name": PLUGIN}]}}}]}))
    assert main(["simulate", "--config", str(cfg), "-o", "json", str(tmp_path / "cluster.yaml")]) == 0
    out, err = capsys.readouterr()
    (pod,) = json.loads(out)["pods"]
    assert pod["node"] == "n2"
    assert "Widget" in err and "NodeResourceTopology" not in err and "CustomResourceDefinition" not in err


def test_changes_of_a_watched_kind_are_cluster_events_that_requeue_pods() -> None:
    sim, result, _ = simulate(docs(nrt("n1", False)))
    try:
        assert result.pods[0].phase == "Unschedulable"
        seen: list[tuple[ClusterEvent, Any, Any]] = []
        queue = sim.scheduler.queue
        real = queue.move_all_to_active_or_backoff_queue

        def recording(event: ClusterEvent, old: Any = None, new: Any = None, *rest: Any) -> int:
            seen.append((event, old, new))
            return real(event, old, new, *rest)

        queue.move_all_to_active_or_backoff_queue = recording  # type: ignore[method-assign,assignment]
        store = sim.scheduler.watched
        # What run's informer does when the object changes: the pod it rejected is queued again.
        fixed = nrt("n1", True)
        store.apply(NRT, fixed)
        event, old, new = seen[-1]
        assert event == ClusterEvent("noderesourcetopologies.v1alpha2.topology.node.k8s.io", ActionType.UPDATE)
        assert old["ok"] is False and new is fixed
        # A Namespace created in the embedded cluster (a known kind) is one too, named "namespaces.v1.".
        from wasmsched.api.types import Namespace
        from wasmsched.testing.builders import make_pod  # noqa: F401 - builders import the api types
        ns = Namespace()
        ns.metadata.name = "later"
        sim.cluster.create(ns)
        assert seen[-1][0] == ClusterEvent("namespaces.v1.", ActionType.ADD)
        assert seen[-1][1] is None and seen[-1][2]["metadata"]["name"] == "later"
        result = sim.run_until_quiet()
        assert (result.pods[0].phase, result.pods[0].node) == ("Scheduled", "n1")
        store.delete(NRT, fixed)
        assert seen[-1][0] == ClusterEvent(NRT.event_resource, ActionType.DELETE) and seen[-1][2] is None
    finally:
        sim.scheduler.close()
