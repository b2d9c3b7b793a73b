"""Ported from kube-scheduler's backend/cache/cache_test.go and node_tree_test.go."""

from __future__ import annotations

from typing import cast

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.framework.snapshot import Snapshot
from wasmsched.scheduler.cache import Cache, CacheError, _NodeTree, zone_key
from wasmsched.testing.builders import make_node, make_pod

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


def _tree_node(name: str, labels: dict[str, str]) -> Node:
    n = Node()
    n.metadata.name = name
    n.metadata.labels.update(labels)
    return n


# node_tree_test.go allNodes
ALL_NODES = [
    _tree_node("node-0", {}),
    _tree_node("node-1", {REGION: "region-1"}),
    _tree_node("node-2", {ZONE: "zone-2"}),
    _tree_node("node-3", {REGION: "region-1", ZONE: "zone-2"}),
    _tree_node("node-4", {REGION: "region-1", ZONE: "zone-2"}),
    _tree_node("node-5", {REGION: "region-1", ZONE: "zone-3"}),
    _tree_node("node-6", {REGION: "region-2", ZONE: "zone-2"}),
    _tree_node("node-7", {REGION: "region-2", ZONE: "zone-2"}),
    _tree_node("node-8", {REGION: "region-2", ZONE: "zone-2"}),
    _tree_node("node-9", {REGION: "region-2", ZONE: "zone-2", BETA_REGION: "region-2", BETA_ZONE: "zone-2"}),
    _tree_node("node-10", {BETA_REGION: "region-2", BETA_ZONE: "zone-3"}),
]


def new_tree(nodes: list[Node]) -> _NodeTree:
    t = _NodeTree()
    for n in nodes:
        t.add(n)
    return t


def verify_tree(t: _NodeTree, expected: dict[str, list[str]]) -> None:
    assert t.tree == expected
    assert sorted(t.zones) == sorted(expected)
    assert len(t.list()) == sum(len(v) for v in expected.values())


@pytest.mark.parametrize(("name", "nodes", "expected"), [
    ("single node no labels", ALL_NODES[:1], {"": ["node-0"]}),
    ("same node specified twice", [ALL_NODES[0], ALL_NODES[0]], {"": ["node-0"]}),
    ("mix of nodes with and without proper labels", ALL_NODES[:4], {
        "": ["node-0"], "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
        "region-1:\x00:zone-2": ["node-3"]}),
    ("mix of nodes with and without proper labels and some zones with multiple nodes", ALL_NODES[:7], {
        "": ["node-0"], "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
        "region-1:\x00:zone-2": ["node-3", "node-4"], "region-1:\x00:zone-3": ["node-5"],
        "region-2:\x00:zone-2": ["node-6"]}),
    ("nodes also using deprecated zone/region label", ALL_NODES[9:], {
        "region-2:\x00:zone-2": ["node-9"], "region-2:\x00:zone-3": ["node-10"]}),
])
def test_node_tree_add(name: str, nodes: list[Node], expected: dict[str, list[str]]) -> None:
    verify_tree(new_tree(nodes), expected)


@pytest.mark.parametrize(("name", "existing", "remove", "expected"), [
    ("remove a single node with no labels", ALL_NODES[:7], ALL_NODES[:1], {
        "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"], "region-1:\x00:zone-2": ["node-3", "node-4"],
        "region-1:\x00:zone-3": ["node-5"], "region-2:\x00:zone-2": ["node-6"]}),
    ("remove a few nodes including one from a zone with multiple nodes", ALL_NODES[:7], ALL_NODES[1:4], {
        "": ["node-0"], "region-1:\x00:zone-2": ["node-4"], "region-1:\x00:zone-3": ["node-5"],
        "region-2:\x00:zone-2": ["node-6"]}),
    ("remove all nodes", ALL_NODES[:7], ALL_NODES[:7], {}),
    ("remove non-existing node", [], ALL_NODES[:5], {}),
])
def test_node_tree_remove(name: str, existing: list[Node], remove: list[Node],
                          expected: dict[str, list[str]]) -> None:
    t = new_tree(existing)
    for n in remove:
        t.remove(n)
    verify_tree(t, expected)


@pytest.mark.parametrize(("name", "existing", "update", "expected"), [
    ("update a node without label", ALL_NODES[:7], _tree_node("node-0", {REGION: "region-1", ZONE: "zone-2"}), {
        "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
        "region-1:\x00:zone-2": ["node-3", "node-4", "node-0"], "region-1:\x00:zone-3": ["node-5"],
        "region-2:\x00:zone-2": ["node-6"]}),
    ("update the only existing node", ALL_NODES[:1], _tree_node("node-0", {REGION: "region-1", ZONE: "zone-2"}), {
        "region-1:\x00:zone-2": ["node-0"]}),
    ("update non-existing node", ALL_NODES[:1], _tree_node("node-new", {REGION: "region-1", ZONE: "zone-2"}), {
        "": ["node-0"], "region-1:\x00:zone-2": ["node-new"]}),
])
def test_node_tree_update(name: str, existing: list[Node], update: Node, expected: dict[str, list[str]]) -> None:
    t = new_tree(existing)
    old = next((n for n in ALL_NODES if n.metadata.name == update.metadata.name), None)
    if old is None:
        old = _tree_node("nonexisting-node", {})
    t.update(old, update)
    verify_tree(t, expected)


@pytest.mark.parametrize(("name", "nodes", "expected"), [
    ("empty tree", [], []),
    ("one node", ALL_NODES[:1], ["node-0"]),
    ("four nodes", ALL_NODES[:4], ["node-0", "node-1", "node-2", "node-3"]),
    ("all nodes", ALL_NODES[:9],
     ["node-0", "node-1", "node-2", "node-3", "node-5", "node-6", "node-4", "node-7", "node-8"]),
])
def test_node_tree_list(name: str, nodes: list[Node], expected: list[str]) -> None:
    assert new_tree(nodes).list() == expected


@pytest.mark.parametrize(("name", "to_add", "to_remove", "ops", "expected"), [
    ("add and remove all nodes", ALL_NODES[2:9], ALL_NODES[2:9],
     ["add", "add", "add", "remove", "remove", "remove"], []),
    ("add and remove some nodes", ALL_NODES[2:9], ALL_NODES[2:9], ["add", "add", "add", "remove"],
     ["node-3", "node-4"]),
    ("remove three nodes", ALL_NODES[2:9], ALL_NODES[2:9],
     ["add", "add", "add", "remove", "remove", "remove", "add"], ["node-5"]),
    ("add more nodes to an exhausted zone", [*ALL_NODES[4:9], ALL_NODES[3]], [],
     ["add"] * 6, ["node-4", "node-5", "node-6", "node-3", "node-7", "node-8"]),
    ("remove zone and add new", [*ALL_NODES[3:5], *ALL_NODES[6:8]], ALL_NODES[3:5],
     ["add", "add", "remove", "add", "add", "remove"], ["node-6", "node-7"]),
])
def test_node_tree_multi_operations(name: str, to_add: list[Node], to_remove: list[Node], ops: list[str],
                                    expected: list[str]) -> None:
    t = _NodeTree()
    ai = ri = 0
    for op in ops:
        if op == "add":
            t.add(to_add[ai])
            ai += 1
        else:
            t.remove(to_remove[ri])
            ri += 1
    assert t.list() == expected


def test_zone_key() -> None:
    assert zone_key(ALL_NODES[0]) == ""
    assert zone_key(ALL_NODES[1]) == "region-1:\x00:"
    assert zone_key(ALL_NODES[10]) == "region-2:\x00:zone-3"


# ----- cache: pods ------------------------------------------------------------------------------


def _node(name: str, zone: str = "") -> Node:
    w = make_node(name).res({"cpu": "1000m", "memory": "1000", "pods": "110"})
    if zone:
        w.label(ZONE, zone)
    return w.obj()


def _pod(name: str, node: str, cpu: str = "100m", mem: str = "500", port: int = 0) -> Pod:
    w = make_pod(name, "test-ns").uid(name).node(node).res({"cpu": cpu, "memory": mem})
    if port:
        w.host_port(port)
    return w.obj()


@pytest.mark.parametrize(("name", "pods", "want_cpu", "want_mem", "want_ports"), [
    # TestAssumePodScheduled
    ("one pod", [_pod("p1", "node1", "100m", "500", 80)], 100, 500, 1),
    ("two pods", [_pod("p1", "node1", "100m", "500", 80), _pod("p2", "node1", "200m", "1Ki", 8080)],
     300, 1524, 2),
    ("pod without requests counts nothing", [make_pod("p0", "test-ns").uid("p0").node("node1").obj()], 0, 0, 0),
])
def test_assume_pod_scheduled(name: str, pods: list[Pod], want_cpu: int, want_mem: int, want_ports: int) -> None:
    c = Cache()
    for p in pods:
        c.assume_pod(p)
    ni = c.nodes["node1"]
    assert (ni.requested.milli_cpu, ni.requested.memory) == (want_cpu, want_mem)
    assert len(ni.used_ports) == want_ports
    assert [pi.pod.metadata.name for pi in ni.pods] == [p.metadata.name for p in pods]
    assert all(c.is_assumed_pod(p) for p in pods)
    # Forgetting every assumed pod leaves nothing behind.
    for p in pods:
        c.forget_pod(p)
    assert "node1" not in c.nodes
    assert c.pod_count() == 0


def test_assume_pod_twice_fails() -> None:
    c = Cache()
    p = _pod("p1", "node1")
    c.assume_pod(p)
    with pytest.raises(CacheError, match="is in the cache, so can't be assumed"):
        c.assume_pod(p)


def test_add_pod_confirms_assumed_pod() -> None:
    # TestAddPodWillConfirm: assume two pods, add one; the other stays assumed.
    c = Cache()
    p1, p2 = _pod("p1", "node1", "100m", "500", 80), _pod("p2", "node1", "200m", "1Ki", 8080)
    c.assume_pod(p1)
    c.assume_pod(p2)
    c.add_pod(p1)
    assert not c.is_assumed_pod(p1)
    assert c.is_assumed_pod(p2)
    ni = c.nodes["node1"]
    assert ni.requested.milli_cpu == 300
    assert c.pod_count() == 2
    # The confirmed pod can no longer be forgotten.
    with pytest.raises(CacheError, match="wasn't assumed so cannot be forgotten"):
        c.forget_pod(p1)


def test_add_pod_confirms_on_a_different_node() -> None:
    # TestAddPodWillReplaceAssumed: the pod added on another node replaces the assumed one.
    c = Cache()
    assumed = _pod("p", "assumed-node")
    c.assume_pod(assumed)
    added = _pod("p", "actual-node")
    c.add_pod(added)
    assert "assumed-node" not in c.nodes
    assert [pi.pod.metadata.name for pi in c.nodes["actual-node"].pods] == ["p"]
    assert not c.is_assumed_pod(added)


def test_add_pod_already_added_is_ignored() -> None:
    c = Cache()
    p = _pod("p", "node1")
    c.add_pod(p)
    c.add_pod(p)
    assert len(c.nodes["node1"].pods) == 1


def test_forget_pod_errors() -> None:
    c = Cache()
    p = _pod("p", "node1")
    with pytest.raises(CacheError, match="wasn't assumed so cannot be forgotten"):
        c.forget_pod(p)
    c.assume_pod(p)
    with pytest.raises(CacheError, match="was assumed on node2 but assigned to node1"):
        c.forget_pod(_pod("p", "node2"))
    c.forget_pod(p)
    assert not c.is_assumed_pod(p)


def test_update_pod() -> None:
    # TestUpdatePod: updates of an added pod replace its accounting.
    c = Cache()
    c.add_node(_node("node1"))
    p = _pod("p", "node1", "100m", "500", 80)
    c.add_pod(p)
    new = _pod("p", "node1", "200m", "1Ki", 8080)
    c.update_pod(p, new)
    ni = c.nodes["node1"]
    assert (ni.requested.milli_cpu, ni.requested.memory) == (200, 1024)
    assert ni.used_ports.check_conflict("0.0.0.0", "TCP", 8080)
    assert not ni.used_ports.check_conflict("0.0.0.0", "TCP", 80)
    assert ni.pods[0].pod is new


def test_update_assumed_pod_is_ignored() -> None:
    # An assumed pod gets no Update before its Add: the update is rejected.
    c = Cache()
    p = _pod("p", "node1", "100m")
    c.assume_pod(p)
    c.update_pod(p, _pod("p", "node1", "500m"))
    assert c.nodes["node1"].requested.milli_cpu == 100


def test_remove_pod() -> None:
    # TestRemovePod: the node info keeps the node after its last pod leaves.
    c = Cache()
    c.add_node(_node("node1"))
    p = _pod("p", "node1")
    c.add_pod(p)
    c.remove_pod(p)
    ni = c.nodes["node1"]
    assert ni.pods == [] and ni.requested.milli_cpu == 0
    assert c.get_pod(p) is None
    c.remove_pod(p)  # unknown pod: no-op (kube returns an error)


def test_remove_assumed_pod() -> None:
    c = Cache()
    p = _pod("p", "node1")
    c.assume_pod(p)
    c.remove_pod(p)
    assert not c.is_assumed_pod(p)
    assert c.pod_count() == 0


# ----- cache: nodes -----------------------------------------------------------------------------


def test_node_operations() -> None:
    # TestNodeOperators: add, update, remove a node with a pod on it.
    c = Cache()
    n = _node("node1")
    c.add_node(n)
    p = _pod("p", "node1", "100m", "500")
    c.add_pod(p)
    assert c.node_count() == 1
    ni = c.nodes["node1"]
    assert ni.allocatable.milli_cpu == 1000 and ni.requested.milli_cpu == 100
    gen = ni.generation
    upd = make_node("node1").res({"cpu": "2000m", "memory": "1000", "pods": "110"}).obj()
    c.update_node(n, upd)
    assert c.nodes["node1"].allocatable.milli_cpu == 2000
    assert c.nodes["node1"].generation > gen
    # Removing the node keeps its pods' accounting until they are deleted.
    c.remove_node(upd)
    assert c.node_count() == 0
    assert "node1" in c.nodes and c.nodes["node1"].node is None
    assert len(c.nodes["node1"].pods) == 1
    c.remove_pod(p)
    assert "node1" not in c.nodes


def test_remove_node_without_pods_drops_it() -> None:
    c = Cache()
    n = _node("node1")
    c.add_node(n)
    c.remove_node(n)
    assert "node1" not in c.nodes


def test_pod_added_before_its_node() -> None:
    c = Cache()
    p = _pod("p", "node1")
    c.add_pod(p)
    assert c.node_count() == 0
    c.add_node(_node("node1"))
    ni = c.nodes["node1"]
    assert ni.node is not None and len(ni.pods) == 1 and ni.requested.milli_cpu == 100


# ----- cache: snapshot --------------------------------------------------------------------------


def _names(nis: list) -> list[str]:  # type: ignore[type-arg]
    return [ni.name for ni in nis]


def _affinity_pod(name: str, node: str) -> Pod:
    return make_pod(name, "test-ns").uid(name).node(node).pod_affinity(ZONE, {"foo": "bar"}).obj()


def _anti_affinity_pod(name: str, node: str) -> Pod:
    return make_pod(name, "test-ns").uid(name).node(node).pod_anti_affinity(ZONE, {"foo": "bar"}).obj()


def test_update_snapshot_clones_only_changed_node_infos() -> None:
    c = Cache()
    for i in range(3):
        c.add_node(_node(f"node{i}"))
    snap = Snapshot()
    c.update_snapshot(snap)
    before = dict(snap.node_info_map)
    assert _names(snap.node_info_list) == ["node0", "node1", "node2"]
    c.add_pod(_pod("p", "node1"))
    c.update_snapshot(snap)
    assert snap.node_info_map["node0"] is before["node0"]
    assert snap.node_info_map["node2"] is before["node2"]
    assert snap.node_info_map["node1"] is not before["node1"]
    assert len(snap.node_info_map["node1"].pods) == 1
    assert len(before["node1"].pods) == 0  # the old clone is untouched
    # The snapshot's NodeInfo is a clone: later cache changes don't leak into it.
    c.add_pod(_pod("q", "node1"))
    assert len(snap.node_info_map["node1"].pods) == 1
    # Nothing changed: nothing recloned.
    c.update_snapshot(snap)
    same = dict(snap.node_info_map)
    c.update_snapshot(snap)
    assert all(snap.node_info_map[k] is v for k, v in same.items())


@pytest.mark.parametrize(("name", "ops", "want_nodes", "want_affinity", "want_anti"), [
    # TestSchedulerCache_UpdateSnapshot (subset): node list order and the pods-with-affinity lists.
    ("empty", [], [], [], []),
    ("add nodes", [("add_node", 0), ("add_node", 1), ("add_node", 2)], ["node0", "node1", "node2"], [], []),
    ("add node and pods with affinity",
     [("add_node", 0), ("add_node", 1), ("add_aff_pod", 1), ("add_anti_pod", 0)],
     ["node0", "node1"], ["node0", "node1"], ["node0"]),
    ("remove pod with affinity", [("add_node", 0), ("add_node", 1), ("add_aff_pod", 1), ("remove_aff_pod", 1)],
     ["node0", "node1"], [], []),
    ("remove node", [("add_node", 0), ("add_node", 1), ("add_node", 2), ("remove_node", 1)],
     ["node0", "node2"], [], []),
    ("remove node with affinity pod keeps it out of the lists",
     [("add_node", 0), ("add_node", 1), ("add_aff_pod", 1), ("remove_node", 1)], ["node0"], [], []),
    ("pod on a node that doesn't exist yet", [("add_node", 0), ("add_aff_pod", 5)], ["node0"], [], []),
    ("zones interleave", [("add_zone_node", (0, "a")), ("add_zone_node", (1, "a")), ("add_zone_node", (2, "b")),
                          ("add_zone_node", (3, "b"))], ["node0", "node2", "node1", "node3"], [], []),
])
def test_update_snapshot_lists(name: str, ops: list[tuple[str, object]], want_nodes: list[str],
                               want_affinity: list[str], want_anti: list[str]) -> None:
    c = Cache()
    snap = Snapshot()
    nodes: dict[int, Node] = {}
    for op, arg in ops:
        # Refresh the snapshot after every step, as the scheduler does every cycle.
        if op == "add_node":
            nodes[arg] = _node(f"node{arg}")  # type: ignore[index]
            c.add_node(nodes[arg])  # type: ignore[index]
        elif op == "add_zone_node":
            i, zone = cast(tuple[int, str], arg)
            nodes[i] = _node(f"node{i}", zone)
            c.add_node(nodes[i])
        elif op == "remove_node":
            c.remove_node(nodes[arg])  # type: ignore[index]
        elif op == "add_aff_pod":
            c.add_pod(_affinity_pod(f"aff{arg}", f"node{arg}"))
        elif op == "remove_aff_pod":
            c.remove_pod(_affinity_pod(f"aff{arg}", f"node{arg}"))
        elif op == "add_anti_pod":
            c.add_pod(_anti_affinity_pod(f"anti{arg}", f"node{arg}"))
        c.update_snapshot(snap)
    assert _names(snap.node_info_list) == want_nodes
    assert sorted(snap.node_info_map) == sorted(want_nodes)
    assert _names(snap.have_pods_with_affinity_list()) == want_affinity
    assert _names(snap.have_pods_with_required_anti_affinity_list()) == want_anti
    assert snap.num_nodes() == len(want_nodes)


def test_update_snapshot_keeps_the_used_pvc_set() -> None:
    # TestSchedulerCache_UpdateSnapshot's PVC cases: usedPVCSet follows pods using claims as they come and
    # go, with the node they are on, and leaves out pods on nodes the cache has not seen.
    c = Cache()
    c.add_node(_node("node0"))
    c.add_node(_node("node1"))
    snap = Snapshot()
    c.update_snapshot(snap)
    assert snap.used_pvc_set == frozenset()
    a = make_pod("a", "test-ns").uid("a").node("node0").pvc("data").obj()
    b = make_pod("b", "test-ns").uid("b").node("node1").pvc("data").pvc("logs").obj()
    c.add_pod(a)
    c.update_snapshot(snap)
    assert snap.used_pvc_set == {"test-ns/data"}
    c.add_pod(b)
    c.update_snapshot(snap)
    assert snap.is_pvc_used_by_pods("test-ns/logs") and not snap.is_pvc_used_by_pods("other/logs")
    c.remove_pod(a)
    c.update_snapshot(snap)
    assert snap.used_pvc_set == {"test-ns/data", "test-ns/logs"}
    c.remove_node(_node("node1"))
    c.update_snapshot(snap)
    assert snap.used_pvc_set == frozenset()
    c.add_pod(make_pod("ghost", "test-ns").uid("ghost").node("node9").pvc("x").obj())
    c.update_snapshot(snap)
    assert snap.used_pvc_set == frozenset()


def test_update_snapshot_fresh_snapshot_gets_everything() -> None:
    # cache.go UpdateSnapshot works from the snapshot's own generation: a new, empty snapshot
    # (generation 0) receives every NodeInfo even after another snapshot was brought up to date.
    c = Cache()
    c.add_node(_node("node0"))
    c.add_node(_node("node1"))
    c.add_pod(_affinity_pod("aff", "node1"))
    first = Snapshot()
    c.update_snapshot(first)
    fresh = Snapshot()
    c.update_snapshot(fresh)
    assert _names(fresh.node_info_list) == ["node0", "node1"]
    assert _names(fresh.have_pods_with_affinity_list()) == ["node1"]


def test_update_snapshot_node_zone_change_reorders() -> None:
    c = Cache()
    a, b, d = _node("a", "z1"), _node("b", "z1"), _node("d", "z2")
    for n in (a, b, d):
        c.add_node(n)
    snap = Snapshot()
    c.update_snapshot(snap)
    assert _names(snap.node_info_list) == ["a", "d", "b"]
    b2 = _node("b", "z2")
    c.update_node(b, b2)
    c.update_snapshot(snap)
    assert _names(snap.node_info_list) == ["a", "d", "b"]  # z1: [a], z2: [d, b]
    assert snap.get("b") is not None and snap.get("b").node is b2  # type: ignore[union-attr]


def test_update_snapshot_assumed_pod_is_visible() -> None:
    c = Cache()
    c.add_node(_node("node1"))
    snap = Snapshot()
    c.update_snapshot(snap)
    p = _pod("p", "node1", "300m")
    c.assume_pod(p)
    c.update_snapshot(snap)
    assert snap.get("node1").requested.milli_cpu == 300  # type: ignore[union-attr]
    c.forget_pod(p)
    c.update_snapshot(snap)
    assert snap.get("node1").requested.milli_cpu == 0  # type: ignore[union-attr]


def test_update_snapshot_generation_follows_changes() -> None:
    # The snapshot's generation is that of the newest NodeInfo it holds: it moves only on changes.
    c = Cache()
    c.add_node(_node("node1"))
    snap = Snapshot()
    c.update_snapshot(snap)
    g = snap.generation
    c.update_snapshot(snap)
    assert snap.generation >= g
    c.add_pod(_pod("p", "node1"))
    c.update_snapshot(snap)
    assert snap.generation > g
