"""docs/abi.md §13 conformance, Registration (items 16-18) and Exports and status (items 19-27): which
framework interfaces a guest gets, the status/reason channel, i64 result unpacking, PreFilterResult,
trap and timeout errors with captured output."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.wasm.harness import load
from wasmsched.api.types import Pod
from wasmsched.framework import interface as fw
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import NodeScore, NominatingMode
from wasmsched.framework.runtime import Framework, PluginRef, ProfilePlugins
from wasmsched.framework.snapshot import new_snapshot
from wasmsched.framework.status import Code, Status, is_rejected, is_success, not_success
from wasmsched.framework.types import NodeInfo, PodInfo, get_pod_key
from wasmsched.plugins.prioritysort.priority_sort import PrioritySort
from wasmsched.scheduler.queue import Nominator
from wasmsched.testing.batch import batch_scores
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.testing.fake_handle import RecordingClient, RecordingEvents
from wasmsched.util.clock import SimClock
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.instance import GuestInstance
from wasmsched.wasm.plugin import WasmPlugin

MIN_INT32 = -(1 << 31)
MAX_INT32 = (1 << 31) - 1

ALL_POINTS: list[type[fw.Plugin]] = [
    fw.FilterPlugin, fw.PostFilterPlugin, fw.PreScorePlugin, fw.ScorePlugin, fw.ReservePlugin, fw.PermitPlugin,
    fw.PreBindPlugin, fw.BindPlugin, fw.PostBindPlugin,
]


def nodes(*names: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(n).obj()) for n in names]


def s64(v: int) -> int:
    """A u64 bit pattern as the signed value an i64 global holds."""
    return v - (1 << 64) if v >= 1 << 63 else v


def pin(plugin: WasmPlugin, pod: Pod, node_infos: Sequence[NodeInfo] = ()) -> GuestInstance:
    """Runs PreFilter for pod and returns the instance pinned to it."""
    _, st = plugin.pre_filter(CycleState(), pod, list(node_infos))
    assert st is None
    iid = plugin.pool.pinned_instance_id(get_pod_key(pod))
    assert iid is not None
    inst = plugin.pool.instance(iid)
    assert inst is not None
    return inst


def points_of(plugin: WasmPlugin) -> set[type[fw.Plugin]]:
    return {p for p in ALL_POINTS if isinstance(plugin, p)}


class _Binder(fw.BindPlugin):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None


def framework_with(plugin: WasmPlugin, node_infos: Sequence[NodeInfo]) -> Framework:
    """A real Framework whose profile enables `plugin` in multiPoint (plus a queue sort and a binder)."""
    cfg = ProfilePlugins(enabled={"queue_sort": [PluginRef("QS")], "bind": [PluginRef("Binder")]},
                         multi_point=[PluginRef(plugin.name)])
    registry: dict[str, Any] = {
        "QS": lambda args, handle: PrioritySort(),
        "Binder": lambda args, handle: _Binder(),
        plugin.name: lambda args, handle: plugin,
    }
    snap = new_snapshot([], [ni.node for ni in node_infos])
    return Framework("default-scheduler", cfg, {}, registry, client=RecordingClient(),
                     event_recorder=RecordingEvents(), snapshot=lambda: snap, pod_nominator=Nominator(),
                     clock=SimClock().now)


def names_at(fwk: Framework, point: str) -> list[str]:
    return [pl.name for pl in fwk.plugins.of(point)]


# ===== Registration ===============================================================================


def test_item16_only_filter_registers_prefilter_and_filter(tmp_path: Path) -> None:
    """Item 16: only `filter` -> PreFilter + Filter (+ EnqueueExtensions), nothing else."""
    plugin = load("conformance_a/counting_filter", tmp_path)
    assert isinstance(plugin, fw.PreFilterPlugin)
    assert isinstance(plugin, fw.EnqueueExtensions)
    assert points_of(plugin) == {fw.FilterPlugin}
    assert plugin.pre_filter_extensions() is None
    fwk = framework_with(plugin, nodes("n1"))
    assert names_at(fwk, "pre_filter") == ["wasm"]
    assert names_at(fwk, "filter") == ["wasm"]
    for point in ("post_filter", "pre_score", "score", "reserve", "permit", "pre_bind", "post_bind"):
        assert names_at(fwk, point) == [], point
    assert names_at(fwk, "bind") == ["Binder"]


def test_item16_prefilter_is_success_without_entering_the_guest(tmp_path: Path) -> None:
    """Item 16: PreFilter is Success (all nodes) without entering the guest; it still pins the instance."""
    plugin = load("conformance_a/counting_filter", tmp_path)
    pod = make_pod("p").obj()
    ns = nodes("n1", "n2")
    result, st = plugin.pre_filter(CycleState(), pod, ns)
    assert result is None and st is None
    inst = plugin.pool.instance(plugin.pool.pinned_instance_id(get_pod_key(pod)))  # type: ignore[arg-type]
    assert inst is not None
    assert inst.get_global("filter_calls") == 0
    assert plugin.counters()["scheduling"] == 1
    assert plugin.filter(CycleState(), pod, ns[0]) is None
    assert inst.get_global("filter_calls") == 1
    # Through the framework too: PreFilter never enters the guest, Filter does.
    fwk = framework_with(plugin, ns)
    state = CycleState()
    result2, st2, with_nodes = fwk.run_pre_filter_plugins(state, pod, ns)
    assert (result2, st2, with_nodes) == (None, None, set())
    assert inst.get_global("filter_calls") == 1
    assert fwk.run_filter_plugins(state, pod, ns[1]) is None
    assert inst.get_global("filter_calls") == 2


PRESCORE_ONLY = """(module (memory (export "memory") 1 1)
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (func (export "prescore") (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1))) (i32.const 0)))"""

NORMALIZESCORE_ONLY = """(module (memory (export "memory") 1 1)
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (func (export "normalizescore") (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1))) (i32.const 0)))"""


def test_item17_prescore_alone_loads(tmp_path: Path) -> None:
    """Item 17: `prescore` alone loads and registers PreScore only."""
    plugin = load(PRESCORE_ONLY, tmp_path)
    assert points_of(plugin) == {fw.PreScorePlugin}
    pod = make_pod("p").obj()
    inst = pin(plugin, pod)
    assert plugin.pre_score(CycleState(), pod, nodes("n1")) is None
    assert inst.get_global("calls") == 1
    fwk = framework_with(plugin, nodes("n1"))
    assert names_at(fwk, "pre_score") == ["wasm"]
    assert names_at(fwk, "score") == [] and names_at(fwk, "filter") == []


def test_item17_normalizescore_alone_loads_without_score_extensions(tmp_path: Path) -> None:
    """Item 17: `normalizescore` alone loads without ScoreExtensions (and without Score)."""
    plugin = load(NORMALIZESCORE_ONLY, tmp_path)
    assert points_of(plugin) == set()
    assert plugin.score_extensions() is None
    fwk = framework_with(plugin, nodes("n1"))
    assert names_at(fwk, "score") == []
    assert names_at(fwk, "pre_filter") == ["wasm"]
    # Running a cycle never enters normalizescore.
    pod = make_pod("p").obj()
    inst = pin(plugin, pod)
    _, st = fwk.run_score_plugins(CycleState(), pod, nodes("n1"))
    assert st is None
    assert inst.get_global("calls") == 0


def test_item17_score_with_normalizescore_has_score_extensions(tmp_path: Path) -> None:
    """Item 17 (§2 table): `score` + `normalizescore` -> Score with ScoreExtensions."""
    src = """(module (memory (export "memory") 1 1)
      (func (export "score") (result i64) (i64.const 0))
      (func (export "normalizescore") (result i32) (i32.const 0)))"""
    plugin = load(src, tmp_path)
    assert points_of(plugin) == {fw.ScorePlugin}
    assert plugin.score_extensions() is not None


RESERVE_ONLY = """(module (memory (export "memory") 1 1)
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (func (export "reserve") (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1))) (i32.const 0)))"""

UNRESERVE_ONLY = """(module (memory (export "memory") 1 1)
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (func (export "unreserve")
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))))"""

ADDPOD_ONLY = """(module (memory (export "memory") 1 1)
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (func (export "addpod") (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1))) (i32.const 3)))"""

REMOVEPOD_ONLY = ADDPOD_ONLY.replace('"addpod"', '"removepod"')


def test_item18_only_reserve_unreserve_is_a_noop(tmp_path: Path) -> None:
    """Item 18: only `reserve` -> Reserve registered; Unreserve is a no-op (no crash, guest not entered)."""
    plugin = load(RESERVE_ONLY, tmp_path)
    assert points_of(plugin) == {fw.ReservePlugin}
    pod = make_pod("p").obj()
    inst = pin(plugin, pod)
    assert plugin.reserve(CycleState(), pod, "n1") is None
    assert inst.get_global("calls") == 1
    plugin.unreserve(CycleState(), pod, "n1")
    assert inst.get_global("calls") == 1
    assert plugin.counters()["discarded"] == 0
    # Through the framework as well.
    fwk = framework_with(plugin, nodes("n1"))
    fwk.run_reserve_plugins_unreserve(CycleState(), pod, "n1")
    assert inst.get_global("calls") == 1


def test_item18_only_unreserve_reserve_is_success(tmp_path: Path) -> None:
    """Item 18: only `unreserve` -> Reserve is Success without a call; Unreserve calls the guest."""
    plugin = load(UNRESERVE_ONLY, tmp_path)
    assert points_of(plugin) == {fw.ReservePlugin}
    pod = make_pod("p").obj()
    inst = pin(plugin, pod)
    assert plugin.reserve(CycleState(), pod, "n1") is None
    assert inst.get_global("calls") == 0
    fwk = framework_with(plugin, nodes("n1"))
    assert fwk.run_reserve_plugins_reserve(CycleState(), pod, "n1") is None
    assert inst.get_global("calls") == 0
    plugin.unreserve(CycleState(), pod, "n1")
    assert inst.get_global("calls") == 1


@pytest.mark.parametrize(("wat", "exported", "missing"), [
    (ADDPOD_ONLY, "add_pod", "remove_pod"),
    (REMOVEPOD_ONLY, "remove_pod", "add_pod"),
])
def test_item18_only_one_pod_extension_the_other_is_success(tmp_path: Path, wat: str, exported: str,
                                                             missing: str) -> None:
    """Item 18: only `addpod` (or only `removepod`) -> PreFilterExtensions; the missing half is Success
    without a call."""
    plugin = load(wat, tmp_path)
    ext = plugin.pre_filter_extensions()
    assert ext is not None
    pod = make_pod("p").obj()
    other = make_pod("q").node("n1").obj()
    inst = pin(plugin, pod)
    [ni] = nodes("n1")
    assert getattr(ext, missing)(CycleState(), pod, PodInfo(other), ni) is None
    assert inst.get_global("calls") == 0
    st = getattr(ext, exported)(CycleState(), pod, PodInfo(other), ni)
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert inst.get_global("calls") == 1


@pytest.mark.parametrize(("exports", "want"), [
    (["filter", "score"], {fw.FilterPlugin, fw.ScorePlugin}),
    (["reserve", "permit"], {fw.ReservePlugin, fw.PermitPlugin}),
    (["postfilter"], {fw.PostFilterPlugin}),
    (["prebind", "bind", "postbind"], {fw.PreBindPlugin, fw.BindPlugin, fw.PostBindPlugin}),
    (["enqueue"], set()),
])
def test_items16_18_exactly_the_exported_points(exports: list[str], want: set[type[fw.Plugin]],
                                                tmp_path: Path) -> None:
    """Items 16-18 (§2 registration): exactly the extension points whose exports exist."""
    sigs = {"filter": "(result i32) (i32.const 0)", "score": "(result i64) (i64.const 0)",
            "reserve": "(result i32) (i32.const 0)", "permit": "(result i64) (i64.const 0)",
            "postfilter": "(result i64) (i64.const 0)", "prebind": "(result i32) (i32.const 0)",
            "bind": "(result i32) (i32.const 0)", "postbind": "", "enqueue": ""}
    src = '(module (memory (export "memory") 1 1) ' + " ".join(
        f'(func (export "{e}") {sigs[e]})' for e in exports) + ")"
    plugin = load(src, tmp_path)
    assert points_of(plugin) == want
    assert isinstance(plugin, fw.PreFilterPlugin) and isinstance(plugin, fw.EnqueueExtensions)


# ===== Exports and status =========================================================================


def test_item19_filter_status_and_reason(tmp_path: Path) -> None:
    """Item 19: `filter` 0 -> Success ""; reason `a != b` + 2 -> Unschedulable `a != b`; later call without
    reason -> ""."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    inst = pin(plugin, pod, [ni])
    assert plugin.filter(CycleState(), pod, ni) is None

    inst.set_global("reason", 1)
    inst.set_global("ret32", 2)
    st = plugin.filter(CycleState(), pod, ni)
    assert st is not None
    assert st.code == Code.UNSCHEDULABLE
    assert st.reasons == ["a != b"]
    assert st.message() == "a != b"

    inst.set_global("reason", 0)
    st = plugin.filter(CycleState(), pod, ni)
    assert st is not None and st.code == Code.UNSCHEDULABLE
    assert st.reasons == [] and st.message() == ""

    inst.set_global("ret32", 0)
    assert plugin.filter(CycleState(), pod, ni) is None
    assert inst.get_global("calls") == 4


def test_item19_reason_with_success(tmp_path: Path) -> None:
    """Item 19 (§6): the reason channel works for any code, including Success; it resets every call."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    inst = pin(plugin, pod, [ni])
    inst.set_global("reason", 1)
    st = plugin.filter(CycleState(), pod, ni)
    assert st is not None and is_success(st) and st.message() == "a != b"
    inst.set_global("reason", 0)
    assert plugin.filter(CycleState(), pod, ni) is None


def test_item19_reason_does_not_leak_across_exports(tmp_path: Path) -> None:
    """Item 19 (§6): a reason set in one export does not leak into the next call of another export."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    inst = pin(plugin, pod, [ni])
    inst.set_global("reason", 1)
    inst.set_global("ret32", 3)
    st = plugin.filter(CycleState(), pod, ni)
    assert st is not None and st.message() == "a != b"
    inst.set_global("reason", 0)
    score, st = plugin.score(CycleState(), pod, ni)
    assert (score, st) == (0, None)


@pytest.mark.parametrize("code", [MIN_INT32, MAX_INT32, 7, -1])
def test_item20_out_of_range_codes_verbatim(code: int, tmp_path: Path) -> None:
    """Item 20: `filter` MinInt32 / MaxInt32 -> that exact code in the Status (printed `Code(<n>)`)."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    inst = pin(plugin, pod, [ni])
    inst.set_global("ret32", code)
    st = plugin.filter(CycleState(), pod, ni)
    assert st is not None
    assert st.code == code
    assert not_success(st) and not is_rejected(st)
    assert str(st.code) == f"Code({code})"
    assert str(st) == (f"Code({code}): wasm: filter returned status Code({code}), outside the ABI's status codes"
                       " 0..6")


@pytest.mark.parametrize("code", [42, -1])
@pytest.mark.parametrize("reason", [0, 1])
def test_out_of_range_code_reason_says_so(code: int, reason: int, tmp_path: Path) -> None:
    """ABI §6: a code outside 0..6 is an Error whose reason names the export and the code (never an
    empty message), followed by the guest's own reason if it set one."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    inst = pin(plugin, pod, [ni])
    inst.set_global("reason", reason)
    inst.set_global("ret32", code)
    st = plugin.filter(CycleState(), pod, ni)
    text = f"wasm: filter returned status Code({code}), outside the ABI's status codes 0..6"
    assert st is not None and st.code == code
    assert st.message() == (f"{text}, a != b" if reason else text)
    # score: status in the low half of the i64
    inst.set_global("ret64", (7 << 32) | (code & 0xFFFFFFFF))
    _, st = plugin.score(CycleState(), pod, ni)
    assert st is not None and st.message().startswith(f"wasm: score returned status Code({code}), outside")
    # permit: status in the high half
    inst.set_global("ret64", (code & 0xFFFFFFFF) << 32)
    st, _ = plugin.permit(CycleState(), pod, "n1")
    assert st is not None and st.message().startswith(f"wasm: permit returned status Code({code}), outside")


@pytest.mark.parametrize("code", [MIN_INT32, MAX_INT32])
def test_item20_framework_treats_out_of_range_code_as_error(code: int, tmp_path: Path) -> None:
    """Item 20: the framework treats MinInt32 / MaxInt32 as Error (without crashing)."""
    plugin = load("conformance_a/results", tmp_path)
    ns = nodes("n1", "n2")
    fwk = framework_with(plugin, ns)
    pod = make_pod("p").obj()
    state = CycleState()
    _, st, _ = fwk.run_pre_filter_plugins(state, pod, ns)
    assert st is None
    inst = plugin.pool.instance(plugin.pool.pinned_instance_id(get_pod_key(pod)))  # type: ignore[arg-type]
    assert inst is not None
    inst.set_global("ret32", code)
    st = fwk.run_filter_plugins(state, pod, ns[0])
    assert st is not None
    assert st.code == Code.ERROR
    assert st.plugin == "wasm"
    batch = fwk.run_filter_plugins_batch(state, pod, ns)
    assert [s.code if s is not None else None for s in batch] == [Code.ERROR, Code.ERROR]


@pytest.mark.parametrize(("packed", "score", "code"), [
    (0x00000064_00000000, 100, None),
    (0xFFFFFFFF_00000000, -1, None),
    (0x00000000_00000002, 0, Code.UNSCHEDULABLE),
    (0x80000000_00000000, MIN_INT32, None),
    (0x7FFFFFFF_00000000, MAX_INT32, None),
])
def test_item21_score_unpacking(packed: int, score: int, code: int | None, tmp_path: Path) -> None:
    """Item 21: `score` 0x00000064_00000000 -> 100, Success; 0xFFFFFFFF_00000000 -> -1;
    0x00000000_00000002 -> 0, Unschedulable (hi32 = score, sign-extended; lo32 = status)."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    inst = pin(plugin, pod, [ni])
    inst.set_global("ret64", s64(packed))
    got, st = plugin.score(CycleState(), pod, ni)
    assert got == score
    if code is None:
        assert st is None
    else:
        assert st is not None and st.code == code


def test_item21_score_nodes_passes_scores_through(tmp_path: Path) -> None:
    """Item 21 (§3): scores pass through unchanged for every node (range checks are the framework's)."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    ns = nodes("n1", "n2")
    inst = pin(plugin, pod, ns)
    inst.set_global("ret64", s64(0xFFFFFFFF_00000000))
    scores, st = batch_scores(plugin, CycleState(), pod, ns)
    assert (scores, st) == ([-1, -1], None)
    # The framework rejects -1 after normalisation: Error, no crash.
    fwk = framework_with(plugin, ns)
    _, fst = fwk.run_score_plugins(CycleState(), pod, ns)
    assert fst is not None and fst.code == Code.ERROR and "invalid score -1" in fst.message()


def test_item22_postfilter_override(tmp_path: Path) -> None:
    """Item 22: `postfilter` nominating `n1`, 0x00000001_00000000 -> {n1, Override}, Success."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    inst = pin(plugin, pod)
    inst.set_global("nominate", 1)
    inst.set_global("ret64", 0x00000001_00000000)
    result, st = plugin.post_filter(CycleState(), pod, {"n1": Status.unschedulable("x")})  # type: ignore[arg-type]
    assert st is None
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.nominated_node_name == "n1"
    assert result.nominating_info.mode == NominatingMode.OVERRIDE


def test_item22_postfilter_noop_unresolvable(tmp_path: Path) -> None:
    """Item 22: 0x00000000_00000003 without nominating -> {"", Noop}, code 3."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    inst = pin(plugin, pod)
    inst.set_global("ret64", 0x00000000_00000003)
    result, st = plugin.post_filter(CycleState(), pod, {})  # type: ignore[arg-type]
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.nominated_node_name == ""
    assert result.nominating_info.mode == NominatingMode.NOOP


def test_item22_postfilter_other_mode_passes_through(tmp_path: Path) -> None:
    """Item 22 (§3): NominatingMode values other than 0/1 pass through; the name does not leak to the next call."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    inst = pin(plugin, pod)
    inst.set_global("nominate", 1)
    inst.set_global("ret64", 0x00000007_00000000)
    result, st = plugin.post_filter(CycleState(), pod, {})  # type: ignore[arg-type]
    assert st is None and result is not None and result.nominating_info is not None
    assert (result.nominating_info.nominated_node_name, result.nominating_info.mode) == ("n1", 7)
    inst.set_global("nominate", 0)
    result, st = plugin.post_filter(CycleState(), pod, {})  # type: ignore[arg-type]
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.nominated_node_name == ""


@pytest.mark.parametrize(("packed", "code", "seconds"), [
    (0x00000004_00002710, Code.WAIT, 10.0),
    (0x00000000_FFFFFFFF, None, 4294967.295),
    (0x00000001_00000000, Code.ERROR, 0.0),
])
def test_item23_permit_unpacking(packed: int, code: int | None, seconds: float, tmp_path: Path) -> None:
    """Item 23: `permit` 0x00000004_00002710 -> Wait, 10 s; 0x00000000_FFFFFFFF -> Success, 4294967295 ms
    (hi32 = status, lo32 = u32 timeout ms: reversed vs score)."""
    plugin = load("conformance_a/results", tmp_path)
    pod = make_pod("p").obj()
    inst = pin(plugin, pod)
    inst.set_global("ret64", packed)
    st, timeout = plugin.permit(CycleState(), pod, "n1")
    if code is None:
        assert st is None
    else:
        assert st is not None and st.code == code
    assert timeout == pytest.approx(seconds)


def test_item23_permit_wait_in_framework(tmp_path: Path) -> None:
    """Item 23: Wait, 10 s makes the framework hold the pod with a 10 s timeout."""
    plugin = load("conformance_a/results", tmp_path)
    ns = nodes("n1")
    fwk = framework_with(plugin, ns)
    pod = make_pod("p").obj()
    inst = pin(plugin, pod)
    inst.set_global("ret64", 0x00000004_00002710)
    st = fwk.run_permit_plugins(CycleState(), pod, "n1")
    assert st is not None and st.code == Code.WAIT
    wp = fwk.get_waiting_pod(get_pod_key(pod))
    assert wp is not None
    deadline = fwk.next_waiting_deadline()
    assert deadline is not None and deadline - fwk.clock() == pytest.approx(10.0)


@pytest.mark.parametrize(("variant", "want"), [(1, {"a", "b"}), (2, {"a"}), (0, None)],
                         ids=["a0b0", "a00b", "nothing"])
def test_item24_prefilter_node_names(variant: int, want: set[str] | None, tmp_path: Path) -> None:
    """Item 24: `prefilter` sending `a\\0b\\0` -> {a,b}; `a\\0\\0b` -> {a}; nothing -> all nodes."""
    plugin = load("conformance_a/prefilter_node_names", tmp_path)
    [inst] = plugin.pool.instances()
    inst.set_global("variant", variant)
    pod = make_pod("p").obj()
    result, st = plugin.pre_filter(CycleState(), pod, nodes("a", "b", "c"))
    assert st is None
    assert inst.get_global("calls") == 1
    assert plugin.pool.pinned_instance_id(get_pod_key(pod)) == inst.id
    if want is None:
        assert result is None or result.all_nodes()
    else:
        assert result is not None and result.node_names == want


def test_item24_node_names_do_not_leak_to_the_next_cycle(tmp_path: Path) -> None:
    """Item 24: a PreFilterResult is this call's only: the next prefilter sending nothing means all nodes."""
    plugin = load("conformance_a/prefilter_node_names", tmp_path)
    [inst] = plugin.pool.instances()
    inst.set_global("variant", 1)
    ns = nodes("a", "b", "c")
    result, _ = plugin.pre_filter(CycleState(), make_pod("p").obj(), ns)
    assert result is not None and result.node_names == {"a", "b"}
    inst.set_global("variant", 0)
    result, _ = plugin.pre_filter(CycleState(), make_pod("q").obj(), ns)
    assert result is None or result.all_nodes()
    assert plugin.counters()["created"] == 1


def test_item24_framework_restricts_to_prefilter_nodes(tmp_path: Path) -> None:
    """Item 24: in the framework, {a,b} restricts evaluation; the pod's PreFilterResult is {a,b}."""
    plugin = load("conformance_a/prefilter_node_names", tmp_path)
    [inst] = plugin.pool.instances()
    inst.set_global("variant", 1)
    ns = nodes("a", "b", "c")
    fwk = framework_with(plugin, ns)
    result, st, with_nodes = fwk.run_pre_filter_plugins(CycleState(), make_pod("p").obj(), ns)
    assert st is None
    assert result is not None and result.node_names == {"a", "b"}
    assert with_nodes == {"wasm"}


SCORE_TRAP = '(module (memory (export "memory") 1 1) (func (export "score") (result i64) unreachable))'


def test_item25_score_trap(tmp_path: Path) -> None:
    """Item 25: `score` trap -> Error, score 0, `wasm: score error: wasm error: unreachable...`."""
    plugin = load(SCORE_TRAP, tmp_path)
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    pin(plugin, pod)
    score, st = plugin.score(CycleState(), pod, ni)
    assert score == 0
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith("wasm: score error: wasm error: unreachable")
    assert plugin.counters()["discarded"] == 1


def test_item25_score_trap_in_framework(tmp_path: Path) -> None:
    """Item 25: the framework's Score fails with the trap text, no crash."""
    plugin = load(SCORE_TRAP, tmp_path)
    ns = nodes("n1", "n2")
    fwk = framework_with(plugin, ns)
    pod = make_pod("p").obj()
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod, ns)
    scores, st = fwk.run_score_plugins(state, pod, ns)
    assert scores == []
    assert st is not None and st.code == Code.ERROR
    assert "wasm: score error: wasm error: unreachable" in st.message()


def test_item26_captured_output_of_the_failing_call_only(tmp_path: Path) -> None:
    """Item 26: `filter` writes `oops` to fd 2, traps -> `wasm: filter error: oops\\nwasm error: unreachable...`
    (no output from earlier calls or from `_start`)."""
    plugin = load("conformance_a/output_then_trap", tmp_path)
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    pin(plugin, pod)
    assert plugin.filter(CycleState(), pod, ni) is None  # prints "early", succeeds
    st = plugin.filter(CycleState(), pod, ni)
    assert st is not None and st.code == Code.ERROR
    msg = st.message()
    assert msg.startswith("wasm: filter error: oops\nwasm error: unreachable"), msg
    assert "early" not in msg and "start" not in msg
    assert plugin.counters()["discarded"] == 1


def test_item26_trap_without_output(tmp_path: Path) -> None:
    """Item 26 (§10): with nothing captured the text is `wasm: <export> error: <trap>`."""
    src = '(module (memory (export "memory") 1 1) (func (export "filter") (result i32) unreachable))'
    plugin = load(src, tmp_path)
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    st = plugin.filter(CycleState(), pod, ni)
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith("wasm: filter error: wasm error: unreachable")


@pytest.mark.parametrize(("body", "kind"), [
    ("(drop (i32.div_u (i32.const 1) (i32.const 0))) (i32.const 0)", "integer divide by zero"),
    ("(drop (i32.load (i32.const 70000))) (i32.const 0)", "out of bounds memory access"),
    ("(drop (i32.div_s (i32.const -2147483648) (i32.const -1))) (i32.const 0)", "integer overflow"),
    ("(drop (i32.trunc_f32_s (f32.const nan))) (i32.const 0)", "invalid conversion to integer"),
])
def test_item26_trap_kinds(body: str, kind: str, tmp_path: Path) -> None:
    """Items 25/26 (§10 kinds): each trap is `wasm: filter error: wasm error: <kind>`."""
    src = f'(module (memory (export "memory") 1 1) (func (export "filter") (result i32) {body}))'
    plugin = load(src, tmp_path)
    st = plugin.filter(CycleState(), make_pod("p").obj(), nodes("n1")[0])
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith(f"wasm: filter error: wasm error: {kind}"), st.message()


def test_item27_endless_filter_times_out(tmp_path: Path) -> None:
    """Item 27: endless `filter` with `timeout: 100ms` -> Error containing `timeout after`; instance
    discarded. (Without the deadline the call would never return and the test would time out.)"""
    plugin = load("conformance_a/endless_filter", tmp_path, timeout="100ms")
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    pin(plugin, pod)
    st = plugin.filter(CycleState(), pod, ni)
    assert st is not None and st.code == Code.ERROR
    assert "timeout after 100ms" in st.message()
    assert st.message().startswith("wasm: filter error: wasm error: timeout after 100ms")
    c = plugin.counters()
    assert c["discarded"] == 1
    assert c["live"] == 0
    assert plugin.pool.pinned_instance_id(get_pod_key(pod)) is None
    # The discarded instance is never entered again: the next call fails without running the guest
    # (which would end in another timeout).
    st = plugin.filter(CycleState(), pod, ni)
    assert st is not None and st.code == Code.ERROR
    assert "guest instance was discarded after a failure" in st.message()


def test_item27_timeout_applies_per_call_and_next_prefilter_gets_fresh_instance(tmp_path: Path) -> None:
    """Item 27: after the timeout the pod's next PreFilter gets a fresh instance (created 2)."""
    plugin = load("conformance_a/endless_filter", tmp_path, timeout="100ms")
    pod = make_pod("p").obj()
    [ni] = nodes("n1")
    first = pin(plugin, pod).id
    st = plugin.filter(CycleState(), pod, ni)
    assert st is not None and "timeout after 100ms" in st.message()
    second = pin(plugin, pod).id
    assert second != first
    c = plugin.counters()
    assert (c["created"], c["discarded"], c["live"]) == (2, 1, 1)


def test_item27_normalize_score_list_untouched_on_error(tmp_path: Path) -> None:
    """§6 host-made statuses: a trapping normalizescore leaves the scores unchanged (Error)."""
    src = """(module (memory (export "memory") 1 1)
      (func (export "score") (result i64) (i64.const 0))
      (func (export "normalizescore") (result i32) unreachable))"""
    plugin = load(src, tmp_path, runtime=Runtime(cache_dir=tmp_path / "cache"))
    pod = make_pod("p").obj()
    pin(plugin, pod)
    scores = [NodeScore("n1", 1), NodeScore("n2", 2)]
    st = plugin.normalize_score(CycleState(), pod, scores)
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith("wasm: normalizescore error: wasm error: unreachable")
    assert [(s.name, s.score) for s in scores] == [("n1", 1), ("n2", 2)]
