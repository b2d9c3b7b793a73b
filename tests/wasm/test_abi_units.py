"""Unit tests of the ABI's tables, its encodings and args decoding (docs/abi.md §3, §4, §7, §9, §11)."""

from __future__ import annotations

import inspect

import pytest

from wasmsched.framework.events import ActionType, EventResource
from wasmsched.framework.interface import NodeScore
from wasmsched.util import klog
from wasmsched.wasm import abi, encoding, native
from wasmsched.wasm.args import decode_args, is_wasm_args
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.host import NATIVE, Host


@pytest.mark.parametrize(("packed", "want"), [
    (0x00000064_00000000, (100, 0)),
    (0xFFFFFFFF_00000000, (-1, 0)),
    (0x00000000_00000002, (0, 2)),
    (-1, (-1, -1)),  # wasmtime hands i64 results over signed
])
def test_unpack_score(packed: int, want: tuple[int, int]) -> None:
    assert encoding.unpack_score(packed) == want


def test_unpack_permit_is_reversed_and_unsigned_timeout() -> None:
    assert encoding.unpack_permit(0x00000004_00002710) == (4, 10_000)
    assert encoding.unpack_permit(0x00000001_00000000) == (1, 0)
    assert encoding.unpack_permit(0x00000000_FFFFFFFF) == (0, 4294967295)


def test_unpack_postfilter() -> None:
    assert encoding.unpack_postfilter(0x00000001_00000000) == (1, 0)
    assert encoding.unpack_postfilter(0x00000000_00000003) == (0, 3)


@pytest.mark.parametrize(("guest", "framework"), [(63, 32767), (60, 32764), (61, 32765), (40, 40),
                                                  (32767, 32767), (1, 1), (2, 2), (1 << 15 | 1, 1)])
def test_map_action(guest: int, framework: int) -> None:
    assert encoding.map_action(guest) == framework


def test_decode_cluster_events_records_and_trailing_bytes() -> None:
    data = bytes.fromhex("01000000 01000000 02000000 02000000".replace(" ", "")) + b"\x05\x00\x00"
    evs = encoding.decode_cluster_events(data, "p", set())
    assert [(e.event.resource, e.event.action_type) for e in evs] == [
        (EventResource.NODE, ActionType.ADD), (EventResource.PERSISTENT_VOLUME, ActionType.DELETE)]


def test_decode_cluster_events_unknown_gvk_is_wildcard_and_warned_once(caplog: pytest.LogCaptureFixture) -> None:
    warned: set[int] = set()
    rec = (11).to_bytes(4, "little") + (63).to_bytes(4, "little")
    evs = encoding.decode_cluster_events(rec * 2, "p", warned)
    assert [e.event.resource for e in evs] == ["*", "*"]
    assert sum("Unknown GVK" in r.getMessage() for r in caplog.records) == 1


def test_decode_cluster_events_short_is_default_list() -> None:
    assert [e.event for e in encoding.decode_cluster_events(b"\x01\x00", "p", set())] == encoding.DEFAULT_EVENTS
    assert len(encoding.DEFAULT_EVENTS) == 6
    assert all(e.action_type == 32767 for e in encoding.DEFAULT_EVENTS)


def test_nul_list() -> None:
    assert encoding.nul_list(b"a\x00b\x00", keep_empty=False) == ["a", "b"]
    assert encoding.nul_list(b"a\x00\x00b", keep_empty=False) == ["a"]
    assert encoding.nul_list(b"k\x00\x00k2\x00v2\x00", keep_empty=True) == ["k", "", "k2", "v2"]
    assert encoding.nul_list(b"no terminator", keep_empty=True) == []


def test_waiting_pod_bytes() -> None:
    assert encoding.waiting_pod_bytes(None, 64) == b"\x00" * 8
    assert encoding.waiting_pod_bytes(None, 4) == b""
    assert encoding.waiting_pod_bytes(b"\x0a\x01x", 64) == b"\x0a\x01x\x00"
    assert encoding.waiting_pod_bytes(b"\x0a\x01x", 3) == b"\x0a\x01x"
    assert encoding.waiting_pod_bytes(b"\x0a" * 20, 8) == b"\xff\xff\xff\xff" + (20).to_bytes(4, "little")


def test_parse_normalized_scores_by_name_in_input_order() -> None:
    scores = [NodeScore("n1", 1), NodeScore("n2", 2), NodeScore("n3", 3)]
    encoding.parse_normalized_scores(b'{"n3":30,"n1":10,"n2":20}', scores)
    assert [(s.name, s.score) for s in scores] == [("n1", 10), ("n2", 20), ("n3", 30)]
    encoding.parse_normalized_scores(b'{"n1":5,"zz":9}', scores)
    assert [s.score for s in scores] == [5, 20, 30]
    encoding.parse_normalized_scores(b"null", scores)
    encoding.parse_normalized_scores(None, scores)
    assert [s.score for s in scores] == [5, 20, 30]
    with pytest.raises(ValueError):
        encoding.parse_normalized_scores(b"{", scores)
    with pytest.raises(ValueError):
        encoding.parse_normalized_scores(b'{"n1":1.5}', scores)


def test_parse_eventf() -> None:
    ev = encoding.parse_eventf(b'{"RegardingReference":{"Kind":"Pod","APIVersion":"v1","Name":"p1","Namespace":"ns",'
                          b'"UID":"u1","ResourceVersion":""},"Eventtype":"Normal","Reason":"r","Action":"a",'
                          b'"Note":"n %s","Extra":1}')
    assert ev.regarding["Name"] == "p1" and ev.regarding["Namespace"] == "ns"
    assert ev.related is None
    assert (ev.eventtype, ev.reason, ev.action, ev.note) == ("Normal", "r", "a", "n %s")
    with pytest.raises(ValueError):
        encoding.parse_eventf(b"[1]")


def test_klog_text_pairs_and_missing_value() -> None:
    assert klog.structured("m", ["k", "", "k2", "v2"]) == '"m" k="" k2="v2"'
    assert klog.structured("m", ["odd"]) == '"m" odd="(MISSING)"'


@pytest.mark.parametrize(("sev", "level"), [(-5, 20), (0, 20), (1, 30), (2, 40), (3, 40), (9, 40)])
def test_klog_levels(sev: int, level: int) -> None:
    assert encoding.klog_level(sev) == level


def test_node_list_bytes_decode_as_node_list() -> None:
    from wasmsched.api.types import NodeList
    from wasmsched.framework.types import NodeInfo
    from wasmsched.testing.builders import make_node

    infos = [NodeInfo(make_node(f"n{i}").obj()) for i in range(3)]
    decoded = NodeList.FromString(encoding.node_list_bytes(infos))
    assert [n.metadata.name for n in decoded.items] == ["n0", "n1", "n2"]


def test_args_defaults_and_types() -> None:
    a = decode_args("p", {"guestURL": "x.wasm"})
    assert (a.timeout, a.start_timeout, a.memory_limit_pages, a.max_instances, a.log_severity) == (1.0, 10.0, 4096,
                                                                                                  32, 0)
    a = decode_args("p", {"guestURL": "x.wasm", "timeout": "0s", "Args": ["a", ""], "guestSHA256": "AB" * 32,
                          "maxInstances": 2, "bogus": 1})
    assert a.timeout is None and a.args == ["a", ""] and a.guest_sha256 == "ab" * 32 and a.max_instances == 2
    assert a.warnings and "bogus" in a.warnings[0]
    assert is_wasm_args({"guestURL": ""}) and not is_wasm_args({"scoringStrategy": {}}) and not is_wasm_args(None)


@pytest.mark.parametrize(("raw", "text"), [
    ({"guestURL": ""}, "wasm: guestURL is required"),
    ({}, "wasm: guestURL is required"),
    ({"guestURL": 3}, "failed to decode into p PluginConfig: guestURL: expected a string"),
    ({"guestURL": "x", "logSeverity": "high"}, "failed to decode into p PluginConfig: logSeverity"),
    ({"guestURL": "x", "timeout": "soon"}, "failed to decode into p PluginConfig: timeout"),
    ({"guestURL": "x", "maxInstances": 0}, "failed to decode into p PluginConfig: maxInstances"),
    ({"guestURL": "x", "args": "a b"}, "failed to decode into p PluginConfig: args"),
    ({"guestURL": "x", "guestSHA256": "xyz"}, "failed to decode into p PluginConfig: guestSHA256"),
])
def test_args_errors(raw: dict, text: str) -> None:
    with pytest.raises(WasmLoadError) as e:
        decode_args("p", raw)
    assert str(e.value).startswith(text)


def test_image_states_json_is_encoded_once_per_change() -> None:
    from wasmsched.framework.snapshot import new_snapshot
    from wasmsched.framework.types import ImageStateSummary
    from wasmsched.testing.builders import make_node

    ni = new_snapshot([], [make_node("n1").image(10, "img:1").obj()]).get("n1")
    first = encoding.image_states_json(ni)
    assert first == b'{"img:1":{"Size":10,"NumNodes":1}}'
    assert encoding.image_states_json(ni) is first
    ni.image_states = {"img:1": ImageStateSummary(10, 2)}  # type: ignore[union-attr]  # the cache replaces the dict on a change
    assert encoding.image_states_json(ni) == b'{"img:1":{"Size":10,"NumNodes":2}}'
    assert encoding.image_states_json(None) == b"null"


def test_each_import_is_in_the_table_once_and_served_by_a_host_method() -> None:
    keys = [(i.module, i.name) for i in abi.IMPORTS]
    assert len(keys) == len(set(keys)) == len(abi.IMPORT_INDEX) == 21 + 12 + 8  # v1, then §14 and §15 v2
    for imp in abi.IMPORTS:
        assert imp.results in ((), ("i32",)), imp
        handler = NATIVE.get(imp.host_method, (native.H_PYTHON,))[0]
        if handler not in (native.H_PYTHON, native.H_KLOG):
            continue  # served by the native host from the call's staged bytes
        method = getattr(Host, imp.host_method)
        # (self, caller, *params): the table's parameters are the method's, in order
        assert len(inspect.signature(method).parameters) == 2 + len(imp.params), imp
