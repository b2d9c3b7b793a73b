"""docs/abi.md §17 [+]: `scorenodes`, Score for a batch of nodes in one call, beside `score`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.wasm.harness import load
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.testing.batch import batch_scores
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.plugin import WasmPlugin

# scorenodes counts its calls, copies filteredNodeList to 0x400 (its length in list_len) and returns
# (addr << 32) | code, the reason "bad node" with a code other than 0; the scores at 0x100 are
# 10, -1, 5000000000, 40 (int64, little-endian). score answers 99 and counts its calls.
GUEST = r"""
(module
  (import "k8s.io/scheduler" "filteredNodeList" (func $list (param i32 i32) (result i32)))
  (import "k8s.io/scheduler" "result.status_reason" (func $reason (param i32 i32)))
  (memory (export "memory") 1 1)
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (global $score_calls (export "score_calls") (mut i32) (i32.const 0))
  (global $code (export "code") (mut i32) (i32.const 0))
  (global $addr (export "addr") (mut i32) (i32.const 0x100))
  (global $list_len (export "list_len") (mut i32) (i32.const 0))
  (global $spin (export "spin") (mut i32) (i32.const 0))
  (data (i32.const 0x100)
    "\0a\00\00\00\00\00\00\00" "\ff\ff\ff\ff\ff\ff\ff\ff" "\00\f2\05\2a\01\00\00\00" "\28\00\00\00\00\00\00\00")
  (data (i32.const 0x200) "bad node")
  (func (export "score") (result i64)
    (global.set $score_calls (i32.add (global.get $score_calls) (i32.const 1)))
    (i64.const 0x0000006300000000))
  (func (export "scorenodes") (result i64)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (if (global.get $spin) (then (loop $forever (br $forever))))
    (global.set $list_len (call $list (i32.const 0x400) (i32.const 0x400)))
    (if (global.get $code) (then (call $reason (i32.const 0x200) (i32.const 8))))
    (i64.or (i64.shl (i64.extend_i32_u (global.get $addr)) (i64.const 32))
            (i64.extend_i32_u (global.get $code))))
)
"""

POD = make_pod("p", "ns").uid("u1").obj()


def nodes(*names: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(n).obj()) for n in names]


def guest(tmp_path: Path, **args: Any) -> WasmPlugin:
    plugin = load(GUEST, tmp_path, **args)
    plugin.pre_filter(CycleState(), POD, [])  # pins the pod's instance
    return plugin


def globals_of(plugin: WasmPlugin) -> Any:
    iid = plugin.pool.pinned_instance_id(get_pod_key(POD))
    inst = plugin.pool.instance(iid) if iid is not None else None
    assert inst is not None
    return inst


def test_a_batch_is_scored_in_one_call_with_its_nodes_listed(tmp_path: Path) -> None:
    plugin = guest(tmp_path)
    scores, st = batch_scores(plugin, CycleState(), POD, nodes("n1", "n2", "n3"))
    # int64 passed through as kube's Score returns them (the framework checks the range after NormalizeScore).
    assert (scores, st) == ([10, -1, 5000000000], None)
    inst = globals_of(plugin)
    assert (inst.get_global("calls"), inst.get_global("score_calls")) == (1, 0)
    assert inst.read_memory(0x400, inst.get_global("list_len")) == b'["n1","n2","n3"]'
    # The one-node form goes through it too.
    assert plugin.score(CycleState(), POD, nodes("n4")[0]) == (10, None)
    assert (inst.get_global("calls"), inst.get_global("score_calls")) == (2, 0)


def test_a_failing_status_is_the_batchs_and_no_score_is_read(tmp_path: Path) -> None:
    plugin = guest(tmp_path)
    globals_of(plugin).set_global("code", int(Code.UNSCHEDULABLE))
    globals_of(plugin).set_global("addr", 0xFFFFFF)  # not read: the call failed
    scores, st = batch_scores(plugin, CycleState(), POD, nodes("n1", "n2"))
    assert scores == [] and st is not None
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE, ["bad node"])


@pytest.mark.parametrize("addr", [0xFFF0, 0xFFFFFFFF])
def test_scores_outside_the_memory_are_an_error_never_zeros(tmp_path: Path, addr: int) -> None:
    plugin = guest(tmp_path)
    globals_of(plugin).set_global("addr", addr - (1 << 32) if addr >= 1 << 31 else addr)
    scores, st = batch_scores(plugin, CycleState(), POD, nodes("n1", "n2", "n3"))
    assert scores == [] and st is not None and st.code == Code.ERROR
    assert st.message() == ("wasm: scorenodes error: invalid scores: the address of 3 scores is outside the "
                            "guest's memory")


def test_under_ignore_unreadable_scores_are_zeros(tmp_path: Path) -> None:
    plugin = guest(tmp_path, failurePolicy="Ignore")
    globals_of(plugin).set_global("addr", 0xFFF0)
    assert batch_scores(plugin, CycleState(), POD, nodes("n1", "n2", "n3")) == ([0, 0, 0], None)


def test_the_time_limit_is_one_per_node(tmp_path: Path) -> None:
    plugin = guest(tmp_path, timeout="20ms")
    globals_of(plugin).set_global("spin", 1)
    scores, st = batch_scores(plugin, CycleState(), POD, nodes("n1", "n2", "n3"))
    assert scores == [] and st is not None and st.code == Code.ERROR
    assert "wasm: scorenodes error: " in st.message() and "timeout after 20ms per node for 3 nodes" in st.message()


def test_scorenodes_needs_score(tmp_path: Path) -> None:
    # A Filter plugin with scorenodes but no score (scorenodes alone exports no plugin function at all).
    without_score = GUEST.replace('(func (export "score") (result i64)', '(func (export "filter") (result i32)')
    without_score = without_score.replace("(i64.const 0x0000006300000000))", "(i32.const 0))")
    with pytest.raises(WasmLoadError, match=r"wasm: guest exports func\[scorenodes\] without func\[score\]"):
        load(without_score, tmp_path)


def test_scorenodes_signature_is_checked(tmp_path: Path) -> None:
    wrong = GUEST.replace('(func (export "scorenodes") (result i64)', '(func (export "scorenodes") (result i32)')
    wrong = wrong.replace("(i64.or (i64.shl (i64.extend_i32_u (global.get $addr)) (i64.const 32))\n"
                          "            (i64.extend_i32_u (global.get $code))))", "(global.get $code))")
    with pytest.raises(WasmLoadError, match=r"wrong signature for func\[scorenodes\]\. should be \(\) -> \(i64\)"):
        load(wrong, tmp_path)


def test_a_cycles_node_list_is_encoded_once_for_prescore_and_score(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from wasmsched.wasm import encoding

    encoded: list[list[str]] = []
    real = encoding.json_string_list

    def counting(items: list[str]) -> bytes:
        encoded.append(list(items))
        return real(items)

    monkeypatch.setattr(encoding, "json_string_list", counting)
    plugin = guest(tmp_path)
    state, feasible = CycleState(), nodes("n1", "n2", "n3")
    # What the framework does: PreScore and then Score are given the same list of the cycle's nodes.
    memo = encoding.filtered_nodes(state, feasible)
    assert batch_scores(plugin, state, POD, feasible) == ([10, -1, 5000000000], None)
    assert batch_scores(plugin, state, POD, feasible) == ([10, -1, 5000000000], None)
    inst = globals_of(plugin)
    assert inst.read_memory(0x400, inst.get_global("list_len")) == b'["n1","n2","n3"]'
    assert encoded == [["n1", "n2", "n3"]] and memo.json() == b'["n1","n2","n3"]'
    # Another list in the same cycle (the framework never does this) is listed and encoded anew, as is the
    # same list in the next cycle.
    assert batch_scores(plugin, state, POD, feasible[:2]) == ([10, -1], None)
    assert inst.read_memory(0x400, inst.get_global("list_len")) == b'["n1","n2"]'
    assert batch_scores(plugin, CycleState(), POD, feasible) == ([10, -1, 5000000000], None)
    assert encoded == [["n1", "n2", "n3"], ["n1", "n2"], ["n1", "n2", "n3"]]
