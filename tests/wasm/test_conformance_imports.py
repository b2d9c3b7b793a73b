"""docs/abi.md §13 conformance, Imports (items 28-41), plus §4/§5 details: the buf/buf_limit protocol,
per-call values outside a call, memory faults, NormalizeScore by name, waiting pods and eventf.

Most tests use tests/wat/conformance_b/import_probe.wat: every export runs a script of import calls
that the test writes into guest memory (see `Probe`), then returns the exported global `status` (i32
exports) or `ret64` (i64 exports). The test reads the import results and written bytes back from memory.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from wasmsched.api.types import Node, NodeList, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeScore, NodeToStatus
from wasmsched.framework.status import Code, Status, is_rejected
from wasmsched.framework.types import NodeInfo, PodInfo, get_pod_key
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.instance import GuestInstance
from wasmsched.wasm.plugin import WasmPlugin

from .harness import WasmHandle, load

PROBE = "conformance_b/import_probe"
START_GETTERS = "conformance_b/start_getters"
SCRIPT = 0xC000  # u32 count, then records of 7 u32: op, a0..a4, result
RECORD = 28
MEM_END = 0x10000  # the probe has exactly one page
CANARY = 0xAA

OPS = {
    "currentPod": 1, "targetPod": 2, "currentNodeName": 3, "filteredNodeList": 4, "nodeToStatusMap": 5,
    "nodeScoreList": 6, "get_config": 7, "nodeList": 8, "node": 9, "nodeImageStates": 10,
    "result.status_reason": 11, "result.node_names": 12, "result.nominated_node_name": 13,
    "result.normalized_score_list": 14, "result.cluster_events": 15, "eventf": 16,
    "reject_waiting_pod": 17, "get_waiting_pod": 18, "log": 19, "logs": 20, "severity": 21,
    "unreachable": 99,
}
ALL_EXPORTS = ("enqueue", "prefilter", "filter", "postfilter", "prescore", "score", "normalizescore", "reserve",
               "unreserve", "permit", "prebind", "bind", "postbind", "addpod", "removepod")
BINDING_EXPORTS = ("prebind", "bind", "postbind", "unreserve")


class Probe:
    """Drives import_probe.wat: writes scripts and data into the guest's memory and reads results back."""

    def __init__(self, plugin: WasmPlugin, pod: Pod | None = None) -> None:
        self.plugin = plugin
        self.pod = pod

    @property
    def inst(self) -> GuestInstance:
        """The pod's pinned instance, else the only live instance (the next one to be pinned or borrowed)."""
        pool = self.plugin.pool
        if self.pod is not None:
            iid = pool.pinned_instance_id(get_pod_key(self.pod))
            if iid is not None:
                inst = pool.instance(iid)
                assert inst is not None
                return inst
        insts = pool.instances()
        assert len(insts) == 1, f"expected exactly one live instance, got {len(insts)}"
        return insts[0]

    def write(self, addr: int, data: bytes) -> None:
        inst = self.inst
        inst.write_memory(addr, data)

    def read(self, addr: int, n: int) -> bytes:
        inst = self.inst
        return bytes(inst.read_memory(addr, n))

    def fill(self, addr: int, n: int, byte: int = CANARY) -> None:
        self.write(addr, bytes([byte]) * n)

    def script(self, *ops: tuple[Any, ...]) -> None:
        """ops: (name, a0, ...) with up to five i32 arguments; results are cleared."""
        out = struct.pack("<I", len(ops))
        for name, *args in ops:
            a = [x & 0xFFFFFFFF for x in args] + [0] * (5 - len(args))
            out += struct.pack("<7I", OPS[name], *a, 0)
        self.write(SCRIPT, out)

    def clear(self) -> None:
        self.write(SCRIPT, b"\0\0\0\0")

    def results(self) -> list[int]:
        n = struct.unpack("<I", self.read(SCRIPT, 4))[0]
        raw = self.read(SCRIPT + 4, n * RECORD)
        return [struct.unpack_from("<i", raw, i * RECORD + 24)[0] for i in range(n)]

    def set_status(self, code: int) -> None:
        self.inst.set_global("status", code)

    def set_ret64(self, value: int) -> None:
        v = value & 0xFFFFFFFFFFFFFFFF
        self.inst.set_global("ret64", v - (1 << 64) if v >= 1 << 63 else v)


def nodes_of(handle: WasmHandle) -> list[NodeInfo]:
    return handle.snapshot_shared_lister().list()


def standard_cluster() -> tuple[WasmHandle, Pod, Pod]:
    pod = make_pod("p").uid("uid-p").label("app", "x").req(cpu="100m").obj()
    target = make_pod("t").uid("uid-t").node("n1").obj()
    n1 = make_node("n1").capacity(cpu="4").obj()
    n2 = make_node("n2").capacity(cpu="8").obj()
    return WasmHandle(pods=[target], nodes=[n1, n2]), pod, target


def probe_plugin(tmp_path: Path, handle: Any = None, **args: Any) -> WasmPlugin:
    return load(PROBE, tmp_path, handle=handle, timeout="1s", **args)


def run_export(plugin: WasmPlugin, export: str, pod: Pod, nodes: list[NodeInfo], target: Pod | None = None,
               node_index: int = 1) -> Any:
    """Calls the framework method that runs `export`; the node under test / selected node is nodes[node_index]."""
    st = CycleState()
    ni = nodes[node_index]
    if export == "enqueue":
        return plugin.events_to_register()
    if export == "prefilter":
        return plugin.pre_filter(st, pod, nodes)
    if export == "filter":
        return plugin.filter(st, pod, ni)
    if export == "postfilter":
        return plugin.post_filter(st, pod, NodeToStatus({"n1": Status(Code.UNSCHEDULABLE)}))
    if export == "prescore":
        return plugin.pre_score(st, pod, nodes)
    if export == "score":
        return plugin.score(st, pod, ni)
    if export == "normalizescore":
        return plugin.normalize_score(st, pod, [NodeScore("n2", 5), NodeScore("n1", 7)])
    if export in ("addpod", "removepod"):
        ext = plugin.pre_filter_extensions()
        assert ext is not None
        fn: Any = ext.add_pod if export == "addpod" else ext.remove_pod
        return fn(st, pod, PodInfo(target if target is not None else pod), ni)
    fn = {"reserve": plugin.reserve, "unreserve": plugin.unreserve, "permit": plugin.permit,
          "prebind": plugin.pre_bind, "bind": plugin.bind, "postbind": plugin.post_bind}[export]
    return fn(st, pod, ni.name)


def prepare(plugin: WasmPlugin, probe: Probe, export: str, pod: Pod, nodes: list[NodeInfo]) -> None:
    """Pins pod (PreFilter with an empty script) and, for binding-cycle exports, hands it off to binding."""
    if export in ("enqueue", "prefilter"):
        return
    probe.clear()
    plugin.pre_filter(CycleState(), pod, nodes)
    if export in BINDING_EXPORTS:
        plugin.scheduling_cycle_done(pod, True)


def walk_pod_end(buf: bytes) -> int:
    """§4.4: the end of get_waiting_pod's Pod bytes, by walking top-level length-delimited fields."""
    i = 0
    while i < len(buf) and buf[i] != 0:
        assert buf[i] in (0x0A, 0x12, 0x1A), f"unexpected tag {buf[i]:#x} at {i}"
        i += 1
        length = shift = 0
        while True:
            b = buf[i]
            i += 1
            length |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        i += length
    return i


# ----- 28: the buf / buf_limit protocol on currentPod ----------------------------------------------------


def _current_pod_n(plugin: WasmPlugin, probe: Probe, pod: Pod, nodes: list[NodeInfo]) -> int:
    probe.script(("currentPod", 0x1000, 0))
    plugin.filter(CycleState(), pod, nodes[0])
    n = probe.results()[0]
    assert n > 0
    return n


def test_28_current_pod_limit_zero_returns_length_and_writes_nothing(tmp_path: Path) -> None:
    """Item 28: limit 0 -> n > 0, nothing written (also for a buffer address outside memory)."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    probe.fill(0x1000, 0x2000)
    probe.script(("currentPod", 0x1000, 0), ("currentPod", 0xFFFFFFF0, 0), ("currentPod", 0x1000, 3))
    assert plugin.filter(CycleState(), pod, nodes[0]) is None
    n, n_far, n_small = probe.results()
    assert n > 3
    assert n_far == n and n_small == n
    assert probe.read(0x1000, 0x2000) == bytes([CANARY]) * 0x2000
    assert plugin.counters()["discarded"] == 0


def test_28_current_pod_exact_limit_writes_n_bytes_and_leaves_byte_n(tmp_path: Path) -> None:
    """Item 28: limit n -> n bytes (the Pod), byte n untouched; limit n-1 -> nothing written, returns n."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    n = _current_pod_n(plugin, probe, pod, nodes)
    probe.fill(0x1000, 0x3000)
    probe.script(("currentPod", 0x1000, n), ("currentPod", 0x2000, n - 1), ("currentPod", 0x3000, n + 100))
    plugin.filter(CycleState(), pod, nodes[0])
    assert probe.results() == [n, n, n]
    got = probe.read(0x1000, n)
    assert Pod.FromString(got) == pod
    assert probe.read(0x1000 + n, 1) == bytes([CANARY])
    assert probe.read(0x2000, n) == bytes([CANARY]) * n
    assert probe.read(0x3000, n) == got
    assert probe.read(0x3000 + n, 100) == bytes([CANARY]) * 100


def test_28_current_pod_repeat_in_one_call_is_stable(tmp_path: Path) -> None:
    """Item 28 / §5 stability: a repeated getter in one call returns the same n and bytes."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    n = _current_pod_n(plugin, probe, pod, nodes)
    probe.script(("currentPod", 0x1000, 0), ("currentPod", 0x1000, n), ("currentPod", 0x3000, n),
                 ("currentPod", 0x5000, 0x1000))
    plugin.filter(CycleState(), pod, nodes[0])
    assert probe.results() == [n, n, n, n]
    assert probe.read(0x1000, n) == probe.read(0x3000, n) == probe.read(0x5000, n)


# ----- 29: imports outside a call (_start) ---------------------------------------------------------------


@pytest.mark.parametrize("with_handle", [True, False], ids=["empty-cluster", "no-handle"])
def test_29_start_per_call_getters_are_zero_and_results_ignored(tmp_path: Path, with_handle: bool) -> None:
    """Item 29: in `_start` the six per-call getters return 0 and write nothing, result.* are ignored,
    nothing traps; get_config and severity work; other imports answer as for an empty cluster (§4.2)."""
    handle = WasmHandle() if with_handle else None
    plugin = load(START_GETTERS, tmp_path, handle=handle, guestConfig="cfg-xyz", logSeverity=2)
    inst = plugin.pool.instances()[0]

    def g(name: str) -> int:
        return int(inst.get_global(name))

    assert g("g_started") == 1
    for name in ("g_pod", "g_target", "g_node_name", "g_filtered", "g_statuses", "g_scores"):
        assert g(name) == 0, name
    mem = bytes(inst.read_memory(0, 0x8000))
    assert mem[0x1000:0x5000] == bytes([CANARY]) * 0x4000  # per-call getters, node and nodeList wrote nothing
    assert g("g_config") == 7 and mem[0x6000:0x6007] == b"cfg-xyz"
    assert g("g_severity") == 2
    assert g("g_node") == 0 and g("g_node_list") == 0
    assert g("g_images") == 4 and mem[0x7000:0x7004] == b"null"
    assert mem[0x7100:0x7108] == bytes(8) and mem[0x7108:0x7110] == bytes([CANARY]) * 8  # not found
    assert mem[0x7200:0x7208] == bytes(8)  # reject: no such pod
    if handle is not None:
        assert handle.recorder.events == []  # eventf dropped
    # status_reason sent in _start does not leak into the first call; calls work normally.
    node = make_node("n7").obj()
    pod = make_pod("p").obj()
    assert plugin.filter(CycleState(), pod, NodeInfo(node)) is None
    assert g("g_filter_node_name") == 2
    assert plugin.counters()["created"] == 1


# ----- 30: get_config ------------------------------------------------------------------------------------


def test_30_get_config_verbatim(tmp_path: Path) -> None:
    """Item 30: get_config returns guestConfig verbatim (UTF-8, whitespace), in any export."""
    cfg = '{"weights": {"a": 1},\n "name": "ünïcode ✓"}  '
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle, guestConfig=cfg)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    want = cfg.encode()
    probe.fill(0x1000, 0x400)
    probe.script(("get_config", 0x1000, 0x400), ("get_config", 0x2000, len(want) - 1))
    plugin.filter(CycleState(), pod, nodes[0])
    assert probe.results() == [len(want), len(want)]
    assert probe.read(0x1000, len(want)) == want
    assert probe.read(0x1000 + len(want), 1) == bytes([CANARY])
    # enqueue (no pod) too
    plugin.pool.release(get_pod_key(pod))
    probe.pod = None
    probe.script(("get_config", 0x3000, 0x400))
    plugin.events_to_register()
    assert probe.results() == [len(want)]
    assert probe.read(0x3000, len(want)) == want


def test_30_get_config_empty_returns_zero(tmp_path: Path) -> None:
    """Item 30: empty guestConfig -> 0, nothing written."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    probe = Probe(plugin, pod)
    probe.fill(0x1000, 16)
    probe.script(("get_config", 0x1000, 16))
    plugin.filter(CycleState(), pod, nodes_of(handle)[0])
    assert probe.results() == [0]
    assert probe.read(0x1000, 16) == bytes([CANARY]) * 16


# ----- 31-34: per-call values (§4.2) ---------------------------------------------------------------------


def _getter_script() -> list[tuple[Any, ...]]:
    return [(name, 0x1000 + i * 0x1000, 0x800) for i, name in enumerate(
        ("currentPod", "currentNodeName", "targetPod", "filteredNodeList", "nodeToStatusMap", "nodeScoreList"))]


def _expected_values(export: str, pod: Pod, target: Pod) -> dict[str, bytes]:
    return {
        "currentPod": b"" if export == "enqueue" else pod.SerializeToString(),
        "currentNodeName": b"n2" if export in ("filter", "score", "reserve", "unreserve", "permit", "prebind",
                                              "bind", "postbind", "addpod", "removepod") else b"",
        "targetPod": target.SerializeToString() if export in ("addpod", "removepod") else b"",
        "filteredNodeList": b'["n1","n2"]' if export == "prescore" else b"[]",
        "nodeToStatusMap": b'{"n1":2}' if export == "postfilter" else b"{}",
        "nodeScoreList": b'{"n2":5,"n1":7}' if export == "normalizescore" else b"{}",
    }


@pytest.mark.parametrize("export", ALL_EXPORTS)
def test_31_to_34_per_call_getter_table(tmp_path: Path, export: str) -> None:
    """Items 31-34 (§4.2 table): currentPod, currentNodeName, targetPod, filteredNodeList, nodeToStatusMap and
    nodeScoreList have their value only in the listed exports; elsewhere 0 (or `[]` / `{}`), nothing written."""
    handle, pod, target = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod if export != "enqueue" else None)
    prepare(plugin, probe, export, pod, nodes)
    probe.fill(0x1000, 0x6000)
    script = _getter_script()
    probe.script(*script)
    run_export(plugin, export, pod, nodes, target=target)
    results = probe.results()
    assert len(results) == len(script)
    for (name, addr, _), n in zip(script, results, strict=True):
        want = _expected_values(export, pod, target)[name]
        assert n == len(want), f"{export}: {name} returned {n}, want {len(want)}"
        got = probe.read(addr, 0x800)
        if name in ("currentPod", "targetPod") and want:
            assert Pod.FromString(got[:n]) == (pod if name == "currentPod" else target)
        else:
            assert got[:n] == want, f"{export}: {name}"
        assert got[n:] == bytes([CANARY]) * (0x800 - n), f"{export}: {name} wrote past its value"


def test_31_current_node_name_filter_and_prefilter(tmp_path: Path) -> None:
    """Item 31: currentNodeName in filter -> the node under test; in prefilter -> 0."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    probe.fill(0x1000, 16)
    probe.script(("currentNodeName", 0x1000, 16))
    plugin.pre_filter(CycleState(), pod, nodes)
    assert probe.results() == [0]
    assert probe.read(0x1000, 16) == bytes([CANARY]) * 16
    for ni in nodes:
        plugin.filter(CycleState(), pod, ni)
        assert probe.results() == [len(ni.name)]
        assert probe.read(0x1000, len(ni.name)).decode() == ni.name


def test_32_filtered_node_list(tmp_path: Path) -> None:
    """Item 32: filteredNodeList in prescore -> ["n1","n2"] (feasible nodes in order); in filter -> []."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    probe.script(("filteredNodeList", 0x1000, 0x100))
    assert plugin.pre_score(CycleState(), pod, nodes) is None
    n = probe.results()[0]
    assert json.loads(probe.read(0x1000, n)) == ["n1", "n2"]
    assert probe.read(0x1000, n) == b'["n1","n2"]'
    assert plugin.pre_score(CycleState(), pod, [nodes[1], nodes[0]]) is None
    n = probe.results()[0]
    assert probe.read(0x1000, n) == b'["n2","n1"]'
    plugin.filter(CycleState(), pod, nodes[0])
    n = probe.results()[0]
    assert probe.read(0x1000, n) == b"[]"


def test_33_node_to_status_map(tmp_path: Path) -> None:
    """Item 33: nodeToStatusMap in postfilter -> explicit statuses only ({"n1":2}); in filter -> {}."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    probe.script(("nodeToStatusMap", 0x1000, 0x100))
    m = NodeToStatus({"n1": Status(Code.UNSCHEDULABLE, ["no"])})
    _, st = plugin.post_filter(CycleState(), pod, m)
    assert st is None
    n = probe.results()[0]
    assert probe.read(0x1000, n) == b'{"n1":2}'  # n2 absent (counts as 3), not listed
    m = NodeToStatus({"n2": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), "n1": Status(Code.UNSCHEDULABLE)})
    plugin.post_filter(CycleState(), pod, m)
    n = probe.results()[0]
    assert json.loads(probe.read(0x1000, n)) == {"n2": 3, "n1": 2}
    plugin.filter(CycleState(), pod, nodes[0])
    n = probe.results()[0]
    assert probe.read(0x1000, n) == b"{}"


def test_33_node_score_list(tmp_path: Path) -> None:
    """Item 33: nodeScoreList in normalizescore -> the input, keys in input order; in score -> {}."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    probe.script(("nodeScoreList", 0x1000, 0x100))
    scores = [NodeScore("n2", 10), NodeScore("n1", 0), NodeScore("n3", -4)]
    assert plugin.normalize_score(CycleState(), pod, scores) is None
    n = probe.results()[0]
    assert probe.read(0x1000, n) == b'{"n2":10,"n1":0,"n3":-4}'
    assert [(s.name, s.score) for s in scores] == [("n2", 10), ("n1", 0), ("n3", -4)]  # no result: unchanged
    plugin.score(CycleState(), pod, nodes[0])
    n = probe.results()[0]
    assert probe.read(0x1000, n) == b"{}"


def test_34_target_pod(tmp_path: Path) -> None:
    """Item 34: targetPod in addpod/removepod -> the pod being added/removed (currentPod stays the pod being
    scheduled); in filter -> 0."""
    handle, pod, target = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    probe.script(("targetPod", 0x1000, 0x800), ("currentPod", 0x2000, 0x800))
    ext = plugin.pre_filter_extensions()
    assert ext is not None
    for fn in (ext.add_pod, ext.remove_pod):
        assert fn(CycleState(), pod, PodInfo(target), nodes[0]) is None
        nt, nc = probe.results()
        assert Pod.FromString(probe.read(0x1000, nt)) == target
        assert Pod.FromString(probe.read(0x2000, nc)) == pod
    probe.fill(0x1000, 0x800)
    plugin.filter(CycleState(), pod, nodes[0])
    assert probe.results()[0] == 0
    assert probe.read(0x1000, 0x800) == bytes([CANARY]) * 0x800


# ----- 35: node, nodeList, nodeImageStates ---------------------------------------------------------------


def _image_cluster() -> tuple[WasmHandle, Pod]:
    n1 = make_node("n1").image(187000000, "img").image(5000, "solo:1", "solo@sha").obj()
    n2 = make_node("n2").image(187000000, "img").obj()
    n3 = make_node("n3").obj()
    return WasmHandle(nodes=[n1, n2, n3]), make_pod("p").obj()


def test_35_node_by_name_and_unknown(tmp_path: Path) -> None:
    """Item 35: node("n1") -> Node n1 (protobuf); unknown -> 0, nothing written."""
    handle, pod = _image_cluster()
    plugin = probe_plugin(tmp_path, handle)
    probe = Probe(plugin, pod)
    probe.write(0x100, b"n1")
    probe.write(0x110, b"nope")
    probe.fill(0x1000, 0x2000)
    probe.script(("node", 0x100, 2, 0x1000, 0x1000), ("node", 0x110, 4, 0x2000, 0x1000))
    plugin.filter(CycleState(), pod, nodes_of(handle)[0])
    n, n_unknown = probe.results()
    assert n > 0
    got = Node.FromString(probe.read(0x1000, n))
    assert got == handle.snapshot_shared_lister().get("n1").node  # type: ignore[union-attr]
    assert n_unknown == 0
    assert probe.read(0x2000, 0x1000) == bytes([CANARY]) * 0x1000


def test_35_node_list_returns_all_snapshot_nodes_in_order(tmp_path: Path) -> None:
    """Item 35 / §4.1: nodeList -> NodeList of all snapshot nodes, in snapshot order."""
    handle, pod = _image_cluster()
    plugin = probe_plugin(tmp_path, handle)
    probe = Probe(plugin, pod)
    probe.script(("nodeList", 0x1000, 0x8000))
    plugin.filter(CycleState(), pod, nodes_of(handle)[0])
    n = probe.results()[0]
    assert 0 < n <= 0x8000
    nl = NodeList.FromString(probe.read(0x1000, n))
    assert [x.metadata.name for x in nl.items] == ["n1", "n2", "n3"]
    assert list(nl.items) == [ni.node for ni in nodes_of(handle)]


def test_35_node_list_empty_cluster_is_zero(tmp_path: Path) -> None:
    """§4.1: an empty snapshot -> empty NodeList (length 0)."""
    plugin = probe_plugin(tmp_path, WasmHandle())
    pod = make_pod("p").obj()
    probe = Probe(plugin, pod)
    probe.script(("nodeList", 0x1000, 0x100))
    plugin.filter(CycleState(), pod, NodeInfo(make_node("x").obj()))
    assert probe.results() == [0]


def test_35_node_image_states(tmp_path: Path) -> None:
    """Item 35: nodeImageStates -> JSON name -> {Size, NumNodes}; no images -> {}; unknown node -> null."""
    handle, pod = _image_cluster()
    plugin = probe_plugin(tmp_path, handle)
    probe = Probe(plugin, pod)
    for addr, name in ((0x100, b"n1"), (0x110, b"n3"), (0x120, b"zz")):
        probe.write(addr, name)
    probe.script(("nodeImageStates", 0x100, 2, 0x1000, 0x800), ("nodeImageStates", 0x110, 2, 0x2000, 0x800),
                 ("nodeImageStates", 0x120, 2, 0x3000, 0x800))
    plugin.filter(CycleState(), pod, nodes_of(handle)[0])
    n1, n3, nz = probe.results()
    states = json.loads(probe.read(0x1000, n1))
    assert set(states) == {"img", "solo:1", "solo@sha"}
    assert {k: states["img"][k] for k in ("Size", "NumNodes")} == {"Size": 187000000, "NumNodes": 2}
    assert {k: states["solo:1"][k] for k in ("Size", "NumNodes")} == {"Size": 5000, "NumNodes": 1}
    assert b" " not in probe.read(0x1000, n1)  # compact JSON
    assert probe.read(0x2000, n3) == b"{}"
    assert probe.read(0x3000, nz) == b"null"


# ----- 36: memory faults in getters ----------------------------------------------------------------------


@pytest.mark.parametrize("op", [
    ("currentPod", MEM_END - 4, 0x10000),
    ("nodeList", MEM_END - 4, 0x10000),
    ("currentNodeName", MEM_END - 1, 0x10000),
    ("node", MEM_END - 1, 8, 0x1000, 0x1000),  # unreadable name
    ("get_waiting_pod", 0x100, 3, MEM_END - 4, 8),
], ids=["currentPod", "nodeList", "currentNodeName", "node-name", "get_waiting_pod"])
def test_36_getter_write_past_memory_end_traps_and_discards(tmp_path: Path, op: tuple[Any, ...]) -> None:
    """Item 36: a host write (or read) outside memory traps the call: Error naming the import, instance discarded;
    later calls for the pod fail without entering the guest until the next PreFilter."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    plugin.pre_filter(CycleState(), pod, nodes)
    probe.write(0x100, b"uid")
    handle.add_waiting_pod(make_pod("w").uid("uid").obj())
    first = probe.inst.id
    probe.script(op)
    st = plugin.filter(CycleState(), pod, nodes[1])
    assert st is not None and st.code == Code.ERROR
    name = op[0] if op[0] in ("nodeList", "node") else ("handle." + op[0] if "waiting" in op[0] else op[0])
    module = "k8s.io/api" if op[0] in ("nodeList", "node") else "k8s.io/scheduler"
    assert st.message().startswith("wasm: filter error: ")
    assert f"host function {module}.{name} failed" in st.message()
    c = plugin.counters()
    assert c["discarded"] == 1 and c["created"] == 1
    st2 = plugin.filter(CycleState(), pod, nodes[0])
    assert st2 is not None and st2.code == Code.ERROR and "guest instance was discarded" in st2.message()
    assert plugin.pool.instance(first) is None or plugin.pool.pinned_instance_id(get_pod_key(pod)) != first
    # the next PreFilter gets a fresh instance whose script (fresh memory) is empty
    _, st3 = plugin.pre_filter(CycleState(), pod, nodes)
    assert st3 is None
    assert plugin.pool.pinned_instance_id(get_pod_key(pod)) != first
    assert plugin.filter(CycleState(), pod, nodes[0]) is None


def test_36_getter_checks_only_the_bytes_written(tmp_path: Path) -> None:
    """§4.2: getters check only the n bytes written: a value ending exactly at memory end, or one that does
    not fit buf_limit at an address outside memory, is no fault."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    probe.script(("currentNodeName", MEM_END - 2, 0xFFFFFFFF), ("currentPod", MEM_END + 100, 1),
                 ("currentNodeName", 0xFFFFFFFF, 0))
    assert plugin.filter(CycleState(), pod, nodes[1]) is None
    assert probe.results() == [2, len(pod.SerializeToString()), 2]
    assert probe.read(MEM_END - 2, 2) == b"n2"
    assert plugin.counters()["discarded"] == 0


# ----- 37: unreadable status reason; invalid UTF-8 ---------------------------------------------------------


def test_37_out_of_bounds_status_reason_no_trap(tmp_path: Path) -> None:
    """Item 37: result.status_reason outside memory -> reason `BUG: out of memory reading message`, no trap."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    plugin.pre_filter(CycleState(), pod, nodes)
    iid = plugin.pool.pinned_instance_id(get_pod_key(pod))
    probe.set_status(2)
    probe.script(("result.status_reason", MEM_END - 10, 100), ("currentNodeName", 0x1000, 16))
    st = plugin.filter(CycleState(), pod, nodes[1])
    assert st is not None
    assert st.code == Code.UNSCHEDULABLE
    assert st.reasons == ["BUG: out of memory reading message"]
    assert probe.results() == [0, 2]  # the guest went on after the setter
    assert plugin.counters()["discarded"] == 0
    assert plugin.pool.pinned_instance_id(get_pod_key(pod)) == iid
    probe.set_status(0)
    probe.clear()
    assert plugin.filter(CycleState(), pod, nodes[1]) is None


def test_status_reason_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    """Conventions / §6: an invalid UTF-8 reason is decoded with U+FFFD, never an error."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    probe = Probe(plugin, pod)
    raw = b"bad \xff\xfe x \xc3"
    probe.write(0x100, raw)
    probe.set_status(3)
    probe.script(("result.status_reason", 0x100, len(raw)))
    st = plugin.filter(CycleState(), pod, nodes_of(handle)[0])
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    reason = st.reasons[0]
    assert reason.startswith("bad \ufffd") and reason.endswith("\ufffd")
    assert " x " in reason
    assert "\\x" not in reason


def test_status_reason_last_setter_wins(tmp_path: Path) -> None:
    """§4.1: the last setter call in a call wins."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    probe = Probe(plugin, pod)
    probe.write(0x100, b"first")
    probe.write(0x110, b"second")
    probe.set_status(2)
    probe.script(("result.status_reason", 0x100, 5), ("result.status_reason", 0x110, 6))
    st = plugin.filter(CycleState(), pod, nodes_of(handle)[0])
    assert st is not None and st.reasons == ["second"]


def test_unconsumed_setters_are_ignored(tmp_path: Path) -> None:
    """§4.1 / §4.2 results read: a setter the current export does not consume is ignored, even with
    invalid content (filter sending node_names, a bad normalized_score_list, a nominated node, events)."""
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    nodes = nodes_of(handle)
    probe = Probe(plugin, pod)
    probe.write(0x100, b"n1\0")
    probe.write(0x110, b"{not json")
    probe.script(("result.node_names", 0x100, 3), ("result.normalized_score_list", 0x110, 9),
                 ("result.nominated_node_name", 0x100, 2), ("result.cluster_events", 0x110, 9))
    assert plugin.filter(CycleState(), pod, nodes[0]) is None
    assert plugin.score(CycleState(), pod, nodes[0]) == (0, None)
    # prescore does not read node_names; prefilter does (and only it)
    assert plugin.pre_score(CycleState(), pod, nodes) is None
    result, st = plugin.pre_filter(CycleState(), pod, nodes)
    assert st is None and result is not None and result.node_names == {"n1"}
    assert plugin.counters()["discarded"] == 0


# ----- 38: NormalizeScore by name --------------------------------------------------------------------------


def _normalize(tmp_path: Path, payload: bytes | None) -> tuple[Status | None, list[tuple[str, int]]]:
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    probe = Probe(plugin, pod)
    if payload is None:
        probe.clear()
    else:
        probe.write(0x1000, payload)
        probe.script(("result.normalized_score_list", 0x1000, len(payload)))
    scores = [NodeScore("n1", 1), NodeScore("n2", 2), NodeScore("n3", 3)]
    st = plugin.normalize_score(CycleState(), pod, scores)
    return st, [(s.name, s.score) for s in scores]


@pytest.mark.parametrize(("payload", "want"), [
    (b'{"n3":30,"n1":10,"n2":20}', [("n1", 10), ("n2", 20), ("n3", 30)]),
    (b'{"n1":5,"zz":9}', [("n1", 5), ("n2", 2), ("n3", 3)]),
    (b"null", [("n1", 1), ("n2", 2), ("n3", 3)]),
    (b"{}", [("n1", 1), ("n2", 2), ("n3", 3)]),
    (None, [("n1", 1), ("n2", 2), ("n3", 3)]),
    (b'{"n2":-7}', [("n1", 1), ("n2", -7), ("n3", 3)]),
], ids=["reordered", "partial-extra-key", "null", "empty-object", "no-call", "negative"])
def test_38_normalize_score_by_name(tmp_path: Path, payload: bytes | None, want: list[tuple[str, int]]) -> None:
    """Item 38 / §4.3: values matched by name over the input list in order; length and order never change."""
    st, got = _normalize(tmp_path, payload)
    assert st is None
    assert got == want


@pytest.mark.parametrize("payload", [b'{"n1":', b"[1,2,3]", b'{"n1":1.5}', b'{"n1":"10"}', b'{"n1":true}'],
                         ids=["bad-json", "array", "float", "string", "bool"])
def test_38_normalize_score_invalid_result_is_error(tmp_path: Path, payload: bytes) -> None:
    """Item 38 / §4.3: invalid JSON or a non-integer fails the call (Error) and leaves the scores unchanged."""
    st, got = _normalize(tmp_path, payload)
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith("wasm: normalizescore error")
    assert got == [("n1", 1), ("n2", 2), ("n3", 3)]


def test_38_normalize_score_via_framework_score_extensions(tmp_path: Path) -> None:
    """Item 38: the probe exports score + normalizescore, so ScoreExtensions is the plugin itself."""
    handle, _, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    assert plugin.score_extensions() is plugin


# ----- 39: get_waiting_pod ---------------------------------------------------------------------------------


def _waiting_setup(tmp_path: Path) -> tuple[WasmPlugin, Probe, Pod, Pod, list[NodeInfo], WasmHandle]:
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    waiting = make_pod("w", "ns").uid("uid-w").label("k", "v").req(cpu="1").node("n1").obj()
    handle.add_waiting_pod(waiting)
    probe = Probe(plugin, pod)
    probe.write(0x100, b"uid-w")
    probe.write(0x110, b"uid-unknown")
    return plugin, probe, pod, waiting, nodes_of(handle), handle


def test_39_get_waiting_pod_unknown_is_eight_zero_bytes(tmp_path: Path) -> None:
    """Item 39: unknown UID -> 8 zero bytes (only if out_limit >= 8), nothing after them."""
    plugin, probe, pod, _, nodes, _ = _waiting_setup(tmp_path)
    probe.fill(0x1000, 0x3000)
    probe.script(("get_waiting_pod", 0x110, 11, 0x1000, 64), ("get_waiting_pod", 0x110, 11, 0x2000, 7),
                 ("get_waiting_pod", 0x110, 11, 0x3000, 8))
    assert plugin.filter(CycleState(), pod, nodes[0]) is None
    assert probe.read(0x1000, 16) == bytes(8) + bytes([CANARY]) * 8
    assert probe.read(0x2000, 8) == bytes([CANARY]) * 8
    assert probe.read(0x3000, 9) == bytes(8) + bytes([CANARY])


def test_39_get_waiting_pod_found_pod_bytes_then_nul(tmp_path: Path) -> None:
    """Item 39 / §4.4: found, n < out_limit -> the Pod bytes then one 0x00 at out+n; the end is found by walking
    top-level fields; n == out_limit -> no terminator."""
    plugin, probe, pod, waiting, nodes, _ = _waiting_setup(tmp_path)
    probe.fill(0x1000, 0x3000)
    probe.script(("get_waiting_pod", 0x100, 5, 0x1000, 0x1000))
    plugin.filter(CycleState(), pod, nodes[0])
    buf = probe.read(0x1000, 0x1000)
    assert buf[0] != 0
    n = walk_pod_end(buf)
    assert buf[n] == 0 and buf[n + 1] == CANARY
    assert Pod.FromString(buf[:n]) == waiting
    # exactly n bytes of room: the Pod bytes, no terminator
    probe.script(("get_waiting_pod", 0x100, 5, 0x2000, n))
    plugin.filter(CycleState(), pod, nodes[0])
    assert probe.read(0x2000, n) == buf[:n]
    assert probe.read(0x2000 + n, 1) == bytes([CANARY])


def test_39_get_waiting_pod_too_small_marker(tmp_path: Path) -> None:
    """Item 39 / §4.4: n > out_limit >= 8 -> FF FF FF FF + u32 LE n; out_limit < 8 -> nothing written."""
    plugin, probe, pod, waiting, nodes, _ = _waiting_setup(tmp_path)
    probe.fill(0x1000, 0x3000)
    probe.script(("get_waiting_pod", 0x100, 5, 0x1000, 8), ("get_waiting_pod", 0x100, 5, 0x2000, 7),
                 ("get_waiting_pod", 0x100, 5, 0x3000, 0x1000))
    plugin.filter(CycleState(), pod, nodes[0])
    n = walk_pod_end(probe.read(0x3000, 0x1000))
    marker = probe.read(0x1000, 12)
    assert marker[:4] == b"\xff\xff\xff\xff"
    assert struct.unpack("<I", marker[4:8])[0] == n
    assert marker[8:] == bytes([CANARY]) * 4
    assert probe.read(0x2000, 8) == bytes([CANARY]) * 8
    # retry with >= n + 1 bytes gets the pod
    probe.script(("get_waiting_pod", 0x100, 5, 0x4000, n + 1))
    plugin.filter(CycleState(), pod, nodes[0])
    got = probe.read(0x4000, n + 1)
    assert Pod.FromString(got[:n]) == waiting and got[n] == 0


def test_39_get_waiting_pod_does_not_reject(tmp_path: Path) -> None:
    """Item 39: get_waiting_pod only reads; the pod keeps waiting."""
    plugin, probe, pod, _, nodes, handle = _waiting_setup(tmp_path)
    probe.script(("get_waiting_pod", 0x100, 5, 0x1000, 0x1000))
    plugin.filter(CycleState(), pod, nodes[0])
    wp = handle.get_waiting_pod("uid-w")
    assert wp is not None and not wp.done()


# ----- 40: reject_waiting_pod ------------------------------------------------------------------------------


def test_40_reject_waiting_pod(tmp_path: Path) -> None:
    """Item 40: reject_waiting_pod -> u64 LE 1 and the pod is rejected; unknown UID -> u64 0."""
    plugin, probe, pod, _, nodes, handle = _waiting_setup(tmp_path)
    wp = handle.get_waiting_pod("uid-w")
    assert wp is not None
    outcome: list[Status | None] = []
    wp.on_done(outcome.append)
    probe.fill(0x1000, 0x100)
    probe.script(("reject_waiting_pod", 0x110, 11, 0x1000, 8), ("reject_waiting_pod", 0x100, 5, 0x1010, 16))
    assert plugin.filter(CycleState(), pod, nodes[0]) is None
    assert probe.read(0x1000, 8) == struct.pack("<Q", 0)
    assert probe.read(0x1008, 8) == bytes([CANARY]) * 8
    assert probe.read(0x1010, 16) == struct.pack("<Q", 1) + bytes([CANARY]) * 8
    assert wp.done()
    assert len(outcome) == 1 and is_rejected(outcome[0])


def test_40_reject_waiting_pod_small_out_still_rejects(tmp_path: Path) -> None:
    """§4.4: reject_waiting_pod always rejects; it writes its u64 only if out_limit >= 8."""
    plugin, probe, pod, _, nodes, handle = _waiting_setup(tmp_path)
    probe.fill(0x1000, 16)
    probe.script(("reject_waiting_pod", 0x100, 5, 0x1000, 4))
    assert plugin.filter(CycleState(), pod, nodes[0]) is None
    assert probe.read(0x1000, 16) == bytes([CANARY]) * 16
    wp = handle.get_waiting_pod("uid-w")
    assert wp is not None and wp.done()


# ----- 41: eventf ------------------------------------------------------------------------------------------

EVENT = {
    "RegardingReference": {"Kind": "Pod", "APIVersion": "v1", "Name": "p1", "Namespace": "ns", "UID": "u1",
                           "ResourceVersion": ""},
    "RelatedReference": {"Kind": "Node", "APIVersion": "v1", "Name": "n1", "Namespace": "", "UID": "nu1",
                         "ResourceVersion": "7"},
    "Eventtype": "Normal", "Reason": "r", "Action": "a", "Note": "n",
}


def _eventf(tmp_path: Path, payload: bytes) -> tuple[WasmPlugin, WasmHandle, Status | None]:
    handle, pod, _ = standard_cluster()
    plugin = probe_plugin(tmp_path, handle)
    probe = Probe(plugin, pod)
    probe.write(0x1000, payload)
    probe.script(("eventf", 0x1000, len(payload)))
    st = plugin.filter(CycleState(), pod, nodes_of(handle)[0])
    return plugin, handle, st


def test_41_eventf_records_the_event(tmp_path: Path) -> None:
    """Item 41: eventf with the §4.1 payload -> the recorder gets (regarding p1, Normal, r, a, n)."""
    _, handle, st = _eventf(tmp_path, json.dumps(EVENT).encode())
    assert st is None
    assert len(handle.recorder.events) == 1
    ev = handle.recorder.events[0]
    reg = ev["regarding"]
    assert (reg["Kind"], reg["APIVersion"], reg["Name"], reg["Namespace"], reg["UID"]) == ("Pod", "v1", "p1",
                                                                                         "ns", "u1")
    assert ev["related"] is not None and ev["related"]["Name"] == "n1" and ev["related"]["Kind"] == "Node"
    assert (ev["type"], ev["reason"], ev["action"], ev["note"]) == ("Normal", "r", "a", "n")


def test_41_eventf_missing_keys_empty_unknown_ignored_note_literal(tmp_path: Path) -> None:
    """§4.1 eventf: missing keys = "", unknown keys ignored, Note is literal (not a format string)."""
    payload = {"RegardingReference": {"Name": "p1"}, "Eventtype": "Warning", "Note": "100%s %d done",
               "Extra": {"x": 1}}
    _, handle, st = _eventf(tmp_path, json.dumps(payload).encode())
    assert st is None
    ev = handle.recorder.events[0]
    assert ev["regarding"]["Name"] == "p1"
    assert ev["regarding"].get("Kind", "") == "" and ev["regarding"].get("Namespace", "") == ""
    assert (ev["type"], ev["reason"], ev["action"], ev["note"]) == ("Warning", "", "", "100%s %d done")


def test_41_eventf_bad_json_is_error(tmp_path: Path) -> None:
    """Item 41: eventf with invalid JSON -> the call fails with Error (host function failure), nothing recorded."""
    plugin, handle, st = _eventf(tmp_path, b'{"RegardingReference": {')
    assert st is not None and st.code == Code.ERROR
    assert "host function k8s.io/scheduler.handle.eventrecorder.eventf failed" in st.message()
    assert handle.recorder.events == []
    assert plugin.counters()["discarded"] == 1
