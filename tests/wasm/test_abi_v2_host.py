"""ABI v2's host side (docs/abi.md §14): the snapshot mirror and its cursor, the overlay of a call's
NodeInfo, cycle states cloned with the framework's CycleState, queueing hints, nominated pods.

The guests are WAT modules of tests/wat/v2; the Go SDK's use of the same imports is tested with its
guests (tests/wasm/test_go_sdk_guest.py)."""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.framework import snapshot as snapshot_module
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, EventResource
from wasmsched.framework.snapshot import Snapshot
from wasmsched.framework.types import PodInfo, QueuedPodInfo, get_pod_key
from wasmsched.plugins.prioritysort import PrioritySort
from wasmsched.scheduler.cache import Cache
from wasmsched.scheduler.queue import SchedulingQueue, build_queueing_hint_map
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.util.clock import SimClock
from wasmsched.wasm import snapshot_sync
from wasmsched.wasm.encoding import PodEncoder
from wasmsched.wasm.plugin import WasmPlugin

from .harness import WAT_DIR, WasmHandle, load

# ----- a reader of §14.1's records, and the mirror it builds -------------------------------------


@dataclass
class MirrorModel:
    """What a guest's mirror holds after applying records: node -> (node bytes, sums JSON, {key: (flags, pod)})."""

    nodes: dict[str, tuple[bytes, dict[str, Any], dict[str, tuple[int, bytes]]]] = field(default_factory=dict)
    records: list[tuple[Any, ...]] = field(default_factory=list)

    def apply(self, value: bytes) -> int:
        """Applies one cursor value; returns its `more` byte."""
        more, i = value[0], 1

        def take() -> bytes:
            nonlocal i
            n = int.from_bytes(value[i:i + 4], "little")
            i += 4
            out = value[i:i + n]
            i += n
            return out

        while i < len(value):
            op = value[i]
            i += 1
            if op == snapshot_sync.NODE:
                name, node, sums = take().decode(), take(), json.loads(take())
                pods = self.nodes[name][2] if name in self.nodes else {}
                self.nodes[name] = (node, sums, pods)
                self.records.append(("NODE", name))
            elif op == snapshot_sync.NODE_GONE:
                name = take().decode()
                self.nodes.pop(name, None)
                self.records.append(("NODE_GONE", name))
            elif op == snapshot_sync.POD:
                name, key = take().decode(), take().decode()
                flags = value[i]
                i += 1
                self.nodes[name][2][key] = (flags, take())
                self.records.append(("POD", name, key))
            elif op == snapshot_sync.POD_GONE:
                name, key = take().decode(), take().decode()
                del self.nodes[name][2][key]
                self.records.append(("POD_GONE", name, key))
            else:
                raise AssertionError(f"unexpected op {op}")
        return more

    def pull(self, mirror: snapshot_sync.Mirror, snap: Snapshot, enc: PodEncoder) -> None:
        self.records.clear()
        while True:
            value = mirror.next_value(snap, enc.encode)
            if not value:
                return
            mirror.consumed()
            if not self.apply(value):
                return

    def matches(self, snap: Snapshot) -> bool:
        want = {ni.name: sorted(get_pod_key(pi.pod) for pi in ni.pods) for ni in snap.list()}
        got = {name: sorted(pods) for name, (_, _, pods) in self.nodes.items()}
        return want == got


def _cluster() -> tuple[Cache, Snapshot]:
    cache = Cache()
    for i in range(3):
        cache.add_node(make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj())
    for i in range(6):
        cache.add_pod(make_pod(f"p{i}").uid(f"p{i}").node(f"n{i % 3}").req(cpu="100m").obj())
    snap = Snapshot()
    cache.update_snapshot(snap)
    return cache, snap


def test_a_new_mirror_gets_every_node_and_pod_then_only_what_changed() -> None:
    cache, snap = _cluster()
    mirror, model, enc = snapshot_sync.Mirror(), MirrorModel(), PodEncoder()
    model.pull(mirror, snap, enc)
    assert model.matches(snap)
    assert sorted(r for r in model.records if r[0] == "NODE") == [("NODE", "n0"), ("NODE", "n1"), ("NODE", "n2")]
    n0 = model.nodes["n0"]
    assert n0[1]["requested"]["milliCPU"] == 200 and n0[1]["allocatable"]["milliCPU"] == 4000
    assert Node.FromString(n0[0]).metadata.name == "n0"

    model.pull(mirror, snap, enc)
    assert model.records == []  # nothing changed, nothing sent

    cache.add_pod(make_pod("p9").uid("p9").node("n1").req(cpu="1").obj())
    cache.remove_pod(snap.get("n2").pods[0].pod)  # type: ignore[union-attr]
    cache.update_snapshot(snap)
    model.pull(mirror, snap, enc)
    assert model.matches(snap)
    # n1: new sums and one pod; n2: new sums and one pod gone; n0 untouched; other pods not re-sent.
    assert sorted(model.records) == [("NODE", "n1"), ("NODE", "n2"), ("POD", "n1", "p9"), ("POD_GONE", "n2", "p2")]
    assert Pod.FromString(model.nodes["n1"][2]["p9"][1]).metadata.name == "p9"


def test_pod_flags_say_which_affinity_lists_a_pod_is_in() -> None:
    cache, snap = _cluster()
    cache.add_pod(make_pod("aff").uid("aff").node("n0").pod_affinity("zone", {"a": "b"}).obj())
    cache.add_pod(make_pod("anti").uid("anti").node("n0").pod_anti_affinity("zone", {"a": "b"}).obj())
    cache.update_snapshot(snap)
    model = MirrorModel()
    model.pull(snapshot_sync.Mirror(), snap, PodEncoder())
    pods = model.nodes["n0"][2]
    assert pods["aff"][0] == snapshot_sync.FLAG_AFFINITY
    assert pods["anti"][0] == snapshot_sync.FLAG_AFFINITY | snapshot_sync.FLAG_REQUIRED_ANTI_AFFINITY
    assert pods["p0"][0] == 0


def test_removed_nodes_and_a_long_journal_keep_the_mirror_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    cache, snap = _cluster()
    mirror, model, enc = snapshot_sync.Mirror(), MirrorModel(), PodEncoder()
    model.pull(mirror, snap, enc)
    cache.remove_node(snap.get("n2").node)  # type: ignore[union-attr, arg-type]
    for p in list(snap.get("n2").pods):  # type: ignore[union-attr]
        cache.remove_pod(p.pod)
    cache.update_snapshot(snap)
    model.pull(mirror, snap, enc)
    assert ("NODE_GONE", "n2") in model.records and model.matches(snap)
    # A journal cleared under a new epoch: the next sync compares every node and still sends only changes.
    monkeypatch.setattr(snapshot_module, "JOURNAL_SLACK", 10)
    epoch = snap.journal_epoch
    for i in range(30):
        cache.add_pod(make_pod(f"q{i}").uid(f"q{i}").node("n0").obj())
        cache.update_snapshot(snap)
    assert snap.journal_epoch > epoch
    model.pull(mirror, snap, enc)
    assert model.matches(snap)
    assert {r[1] for r in model.records} == {"n0"}


def test_a_large_sync_comes_in_chunks_marked_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_sync, "CHUNK_BYTES", 300)  # cut after each node
    _, snap = _cluster()
    mirror, enc = snapshot_sync.Mirror(), PodEncoder()
    values = []
    while True:
        v = mirror.next_value(snap, enc.encode)
        assert mirror.next_value(snap, enc.encode) is v  # not consumed: the same value again
        mirror.consumed()
        values.append(v)
        if v[0] == 0:
            break
    assert len(values) > 1 and all(v[0] == 1 for v in values[:-1])
    model = MirrorModel()
    for v in values:
        model.apply(v)
    assert model.matches(snap)


def test_overlay_lists_the_pods_a_dry_run_removed_and_added() -> None:
    _, snap = _cluster()
    base = snap.get("n0")
    assert base is not None
    enc = PodEncoder()
    assert snapshot_sync.overlay(base, base, enc.encode) == b""
    copy = base.clone()
    copy.remove_pod(base.pods[0].pod)
    copy.add_pod(make_pod("nom").uid("nom").node("n0").req(cpu="1").obj())
    model = MirrorModel(nodes={"n0": (b"", {}, {get_pod_key(pi.pod): (0, b"") for pi in base.pods})})
    value = snapshot_sync.overlay(copy, base, enc.encode)
    sums_at = value.rindex(b"\x06")
    model.apply(b"\x00" + value[:sums_at])
    assert sorted(model.records) == [("POD", "n0", "nom"), ("POD_GONE", "n0", "p0")]
    assert json.loads(value[sums_at + 5:])["requested"]["milliCPU"] == 1100


# ----- through a guest ---------------------------------------------------------------------------


def _instance(plugin: WasmPlugin, pod: Pod) -> Any:
    inst_id = plugin.pool.pinned_instance_id(get_pod_key(pod))
    assert inst_id is not None
    inst = plugin.pool.instance(inst_id)
    assert inst is not None
    return inst


def test_the_cursor_serves_a_value_until_it_fits_then_the_next(tmp_path: Path) -> None:
    cache, snap = _cluster()
    handle = WasmHandle()
    handle._snapshot = snap
    plugin = load("v2/snapshot_cursor", tmp_path, handle)
    pod = make_pod("x").uid("x").obj()
    state = CycleState()
    plugin.pre_filter(state, pod, snap.list())
    assert plugin.filter(state, pod, snap.list()[0]) is None  # type: ignore[attr-defined]
    inst = _instance(plugin, pod)
    n0, n1, n2 = (inst.get_global(g) for g in ("n0", "n1", "n2"))
    assert n0 == n1 > 0 and n2 == 0
    model = MirrorModel()
    assert model.apply(inst.read_memory(4096, n1)) == 0
    assert model.matches(snap)
    assert inst.get_global("ov") == 0  # the snapshot's own NodeInfo: no overlay

    cache.add_pod(make_pod("late").uid("late").node("n0").req(cpu="1").obj())
    cache.update_snapshot(snap)
    copy = snap.list()[1].clone()
    copy.remove_pod(copy.pods[0].pod)
    plugin.filter(state, pod, copy)  # type: ignore[attr-defined]
    n1 = inst.get_global("n1")
    model.records.clear()
    model.apply(inst.read_memory(4096, n1))
    assert model.matches(snap) and model.records == [("NODE", "n0"), ("POD", "n0", "late")]
    assert inst.get_global("ov") > 0


def _cloned_state(tmp_path: Path, edit: tuple[str, str] = ("", "")) -> tuple[WasmPlugin, Snapshot, Pod, CycleState]:
    """tests/wat/v2/cloned_state.wat (with one text replaced) past PreFilter for pod x: plugin, snapshot,
    pod and the cycle's CycleState."""
    _, snap = _cluster()
    handle = WasmHandle()
    handle._snapshot = snap
    plugin = load((WAT_DIR / "v2" / "cloned_state.wat").read_text().replace(*edit), tmp_path, handle)
    pod = make_pod("x").uid("x").obj()
    state = CycleState()
    plugin.pre_filter(state, pod, snap.list())
    return plugin, snap, pod, state


@pytest.fixture
def cloned(tmp_path: Path) -> tuple[WasmPlugin, Snapshot, Pod, CycleState]:
    return _cloned_state(tmp_path)


def test_preemption_changes_a_copy_of_the_guest_state_not_the_cycle_state(
        cloned: tuple[WasmPlugin, Snapshot, Pod, CycleState]) -> None:
    plugin, snap, pod, state = cloned
    ni = snap.list()[0]
    dry_run = state.clone()
    victim = PodInfo(make_pod("v").uid("v").node(ni.name).obj())
    assert plugin.add_pod(dry_run, pod, victim, ni) is None  # type: ignore[attr-defined]
    # The copy's Filter sees AddPod's change; the cycle's own state is as PreFilter left it.
    st = plugin.filter(dry_run, pod, ni)  # type: ignore[attr-defined]
    assert st is not None and st.code.name == "UNSCHEDULABLE"
    assert plugin.filter(state, pod, ni) is None  # type: ignore[attr-defined]
    nested = dry_run.clone()
    assert plugin.remove_pod(nested, pod, victim, ni) is None  # type: ignore[attr-defined]
    assert plugin.filter(nested, pod, ni) is None  # type: ignore[attr-defined]
    assert plugin.filter(dry_run, pod, ni) is not None  # type: ignore[attr-defined]


def test_dropped_copies_are_released_to_the_guest(cloned: tuple[WasmPlugin, Snapshot, Pod, CycleState]) -> None:
    plugin, _, pod, state = cloned
    for _ in range(5):
        state.clone()  # dropped at once
    gc.collect()
    state.clone()
    assert _instance(plugin, pod).get_global("released_total") == 5


def test_a_failed_copy_fails_the_calls_made_with_it(tmp_path: Path) -> None:
    plugin, snap, pod, state = _cloned_state(tmp_path, ("(local.get $new)))", "(i32.const -1)))"))
    st = plugin.filter(state.clone(), pod, snap.list()[0])  # type: ignore[attr-defined]
    assert st is not None and st.code.name == "ERROR"
    assert "cyclestate_clone error: returned -1" in st.message()


def test_a_guest_without_cyclestate_clone_keeps_v1_semantics(tmp_path: Path) -> None:
    """§8: the v1 guest's one state per instance; the framework's copy is not a guest copy."""
    plugin, snap, pod, state = _cloned_state(tmp_path, ('(export "cyclestate_clone")', ""))
    ni = snap.list()[0]
    plugin.add_pod(state.clone(), pod, PodInfo(make_pod("v").uid("v").obj()), ni)  # type: ignore[attr-defined]
    assert plugin.filter(state, pod, ni) is not None  # type: ignore[attr-defined]


# ----- queueing hints ----------------------------------------------------------------------------

NODE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)


def test_events_with_hints_are_registered_with_the_framework_values(tmp_path: Path) -> None:
    plugin = load("v2/hints", tmp_path, WasmHandle())
    events = plugin.events_to_register()
    assert [(e.event.resource, e.event.action_type, e.queueing_hint_fn is not None) for e in events] == [
        ("Node", 8, True), ("Pod", 1, False)]


def test_a_rejected_pod_moves_only_on_events_its_guest_hint_accepts(tmp_path: Path) -> None:
    plugin = load("v2/hints", tmp_path, WasmHandle())
    clock = SimClock()
    q = SchedulingQueue(PrioritySort().less, clock.now, queueing_hints={
        "default-scheduler": build_queueing_hint_map([("wasm", e) for e in plugin.events_to_register()])})
    pod = make_pod("p").uid("p").obj()
    q.add(pod)
    qpi = q.pop()
    assert isinstance(qpi, QueuedPodInfo)
    qpi.unschedulable_plugins = {"wasm"}
    q.add_unschedulable_if_not_present(qpi)
    old = make_node("n").obj()
    for i in range(1000):
        new = make_node("n").label("i", str(i)).obj()
        q.move_all_to_active_or_backoff_queue(NODE_LABEL, old, new)
    assert get_pod_key(pod) in q.unschedulable_pods
    with plugin.pool.borrowed() as inst:
        assert inst.get_global("calls") == 1000
        assert inst.get_global("last_event") == 0
        assert inst.get_global("new_len") == len(new.SerializeToString())
        assert inst.get_global("old_len") == len(old.SerializeToString())
        inst.set_global("answer", 1)
    q.move_all_to_active_or_backoff_queue(NODE_LABEL, old, make_node("n").label("go", "1").obj())
    assert get_pod_key(pod) not in q.unschedulable_pods


@pytest.mark.parametrize("answer", [2, -1])
def test_a_hint_outside_queue_and_skip_is_an_error_and_requeues(tmp_path: Path, answer: int) -> None:
    plugin = load("v2/hints", tmp_path, WasmHandle())
    fn = plugin.events_to_register()[0].queueing_hint_fn
    assert fn is not None
    with plugin.pool.borrowed() as inst:
        inst.set_global("answer", answer)
    with pytest.raises(Exception, match=f"wasm: queueinghint returned {answer}"):
        fn(make_pod("p").obj(), None, make_node("n").obj())
    with plugin.pool.borrowed() as inst:
        assert inst.get_global("old_len") == 0  # no old object


@pytest.mark.parametrize(("payload", "why"), [
    ('{"resource":"Node"}', "non-empty JSON array"),
    ('[{"resource":"","action":1}]', "[0].resource"),
    ('[{"resource":"Node","action":0}]', "[0].action"),
    ('[{"resource":"Node","action":1,"hint":1}]', "[0].hint"),
])
def test_bad_hint_registrations_fall_back_to_the_default_list(tmp_path: Path, payload: str, why: str,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    text = (WAT_DIR / "v2" / "hints.wat").read_text()
    start = text.index('(data (i32.const 1024) "') + len('(data (i32.const 1024) "')
    end = text.index('")', start)
    escaped = payload.replace('"', '\\"')
    text = text[:start] + escaped + text[end:]
    text = text.replace("(i32.const 1024) (i32.const 87)", f"(i32.const 1024) (i32.const {len(payload)})")
    plugin = load(text, tmp_path, WasmHandle())
    events = plugin.events_to_register()
    assert len(events) == 6 and all(e.queueing_hint_fn is None for e in events)
    assert why in caplog.text and "invalid result.cluster_events_with_hints" in caplog.text


def test_hint_objects_are_protobuf_for_pods_and_nodes_and_json_otherwise() -> None:
    from wasmsched.api.types import PersistentVolume
    from wasmsched.wasm.encoding import object_bytes

    enc = PodEncoder()
    pod, node = make_pod("p").obj(), make_node("n").obj()
    assert object_bytes(pod, enc) == pod.SerializeToString()
    assert object_bytes(node, enc) == node.SerializeToString()
    pv = PersistentVolume()
    pv.metadata.name = "pv1"
    assert json.loads(object_bytes(pv, enc) or b"")["metadata"]["name"] == "pv1"
    assert json.loads(object_bytes({"kind": "X"}, enc) or b"") == {"kind": "X"}
    assert object_bytes(None, enc) is None
    # Registered for "*": the guest cannot tell a kind from protobuf bytes, so every object is JSON.
    assert json.loads(object_bytes(pod, enc, as_json=True) or b"")["kind"] == "Pod"
    assert json.loads(object_bytes(node, enc, as_json=True) or b"")["metadata"]["name"] == "n"


def test_queueing_hint_is_a_v2_export_with_a_checked_signature(tmp_path: Path) -> None:
    from wasmsched.wasm.errors import WasmLoadError

    bad = '(module (memory (export "memory") 1) (func (export "filter") (result i32) (i32.const 0))' \
          ' (func (export "queueinghint")))'
    with pytest.raises(WasmLoadError, match=r"func\[queueinghint\]. should be \(\) -> \(i32\)"):
        load(bad, tmp_path, WasmHandle())


# ----- nominated pods ----------------------------------------------------------------------------


class NominatingHandle(WasmHandle):
    """Runs 'every Filter' as the framework would: the guest's own filter, and one test filter that
    rejects a node with a nominated pod."""

    def __init__(self) -> None:
        super().__init__()
        self.plugin: WasmPlugin | None = None
        self.runs: list[tuple[str, str, bool]] = []

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: Any) -> Any:
        from wasmsched.framework.status import Code, Status

        assert self.plugin is not None
        own = self.plugin.filter(state, pod, node_info)  # type: ignore[attr-defined]
        self.runs.append((pod.metadata.name, node_info.name, own is None))
        if self.nominated.get(node_info.name):
            return Status(Code.UNSCHEDULABLE, ["node has nominated pods"])
        return None


def test_a_guest_reads_nominated_pods_and_runs_the_filters_with_them(tmp_path: Path) -> None:
    from wasmsched.framework.interface import NodeToStatus

    _, snap = _cluster()
    handle = NominatingHandle()
    handle._snapshot = snap
    plugin = handle.plugin = load("v2/nominated", tmp_path, handle)
    nominated = [make_pod(f"nom{i}").uid(f"nom{i}").nominated_node("n1").obj() for i in range(2)]
    handle.nominated["n1"] = [PodInfo(p) for p in nominated]
    pod = make_pod("x").uid("x").obj()
    state = CycleState()
    plugin.pre_filter(state, pod, snap.list())
    _, st = plugin.post_filter(state, pod, NodeToStatus({}))  # type: ignore[attr-defined]
    assert st is None
    inst = _instance(plugin, pod)
    value = inst.read_memory(4096, inst.get_global("nom_len"))
    names, i = [], 0
    while i < len(value):
        n = int.from_bytes(value[i:i + 4], "little")
        names.append(Pod.FromString(value[i + 4:i + 4 + n]).metadata.name)
        i += 4 + n
    assert names == ["nom0", "nom1"]
    result = inst.read_memory(8192, inst.get_global("rf_len"))
    assert int.from_bytes(result[:4], "little", signed=True) == 2
    assert result[8:] == b"node has nominated pods"
    # The guest's own filter (which rejects every node) was skipped, not deadlocked on its busy instance.
    assert handle.runs == [("x", "n1", True)]
    # An unknown node: UnschedulableAndUnresolvable, without running any filter.
    inst.write_memory(64, b"zz")
    plugin.post_filter(state, pod, NodeToStatus({}))  # type: ignore[attr-defined]
    result = inst.read_memory(8192, inst.get_global("rf_len"))
    assert int.from_bytes(result[:4], "little") == 3 and result[8:] == b'node "zz" not found'
    assert len(handle.runs) == 1


# ----- watched objects ---------------------------------------------------------------------------


def test_a_guest_lists_and_gets_the_objects_its_args_watch(tmp_path: Path) -> None:
    from wasmsched.api.gvr import GroupVersionResource

    nrt = GroupVersionResource("topology.node.k8s.io", "v1alpha2", "noderesourcetopologies")
    handle = WasmHandle()
    plugin = load("v2/objects", tmp_path, handle, watch=[
        {"group": "topology.node.k8s.io", "version": "v1alpha2", "resource": "noderesourcetopologies"}])
    for name, zone in (("n2", "a"), ("n1", "a"), ("n3", "b")):
        handle.watched.apply(nrt, {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
                                   "metadata": {"name": name, "labels": {"zone": zone}}})
    pod = make_pod("x").uid("x").obj()
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.filter(state, pod, make_node_info("n1")) is None  # type: ignore[attr-defined]
    inst = _instance(plugin, pod)
    value, names, i = inst.read_memory(8192, inst.get_global("list_len")), [], 0
    while i < len(value):
        n = int.from_bytes(value[i:i + 4], "little")
        names.append(json.loads(value[i + 4:i + 4 + n])["metadata"]["name"])
        i += 4 + n
    assert names == ["n1", "n2"]  # the selector's, in (namespace, name) order
    got = json.loads(inst.read_memory(16384, inst.get_global("get_len")))
    assert got["kind"] == "NodeResourceTopology" and got["metadata"]["name"] == "n1"
    # A resource the args do not watch fails the call.
    inst.set_global("undeclared", 1)
    st = plugin.filter(state, pod, make_node_info("n1"))  # type: ignore[attr-defined]
    assert st is not None and "handle.objects.list failed: resource namespaces is not in args.watch" in st.message()


def make_node_info(name: str) -> Any:
    from wasmsched.framework.types import NodeInfo

    return NodeInfo(make_node(name).obj())


def test_a_new_mirror_gets_the_nodes_in_the_snapshot_s_list_order() -> None:
    """A guest lists nodes in the order of their first NODE record (§14.1)."""
    cache = Cache()
    for name in ("n-c", "n-a", "n-b"):
        cache.add_node(make_node(name).label("topology.kubernetes.io/zone", name[-1]).obj())
    snap = Snapshot()
    cache.update_snapshot(snap)
    model = MirrorModel()
    model.pull(snapshot_sync.Mirror(), snap, PodEncoder())
    # The snapshot's map holds them in another order (the cache's most recently changed first).
    assert list(snap.node_info_map) != [ni.name for ni in snap.list()]
    assert [r[1] for r in model.records if r[0] == "NODE"] == [ni.name for ni in snap.list()]
