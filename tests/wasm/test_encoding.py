"""Pods and nodes reach guests as protobuf bytes serialized at most once per object version (issue 3:
a pod is serialized once per scheduling attempt at most, a node once per change)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.wasm.harness import WasmHandle, load
from wasmsched.api.types import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm import encoding
from wasmsched.wasm.engine import Runtime

# filter reads the current pod, then the node under test through k8s.io/api.node.
READER = """(module
  (import "k8s.io/scheduler" "currentPod" (func $pod (param i32 i32) (result i32)))
  (import "k8s.io/scheduler" "currentNodeName" (func $name (param i32 i32) (result i32)))
  (import "k8s.io/api" "node" (func $node (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2 2)
  (func (export "filter") (result i32)
    (local $n i32)
    (drop (call $pod (i32.const 4096) (i32.const 60000)))
    (local.set $n (call $name (i32.const 0) (i32.const 256)))
    (drop (call $node (i32.const 0) (local.get $n) (i32.const 70000) (i32.const 60000)))
    (i32.const 0)))"""


@pytest.fixture
def serializations(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"Pod": 0, "Node": 0}
    for cls in (Pod, Node):
        original = cls.SerializeToString

        def counting(self: object, *a: object, _orig: object = original, _kind: str = cls.__name__,
                     **kw: object) -> bytes:
            counts[_kind] += 1
            return _orig(self, *a, **kw)  # type: ignore[operator]

        monkeypatch.setattr(cls, "SerializeToString", counting)
    return counts


def test_one_serialization_per_pod_and_node_across_calls_and_plugins(tmp_path: Path,
                                                                       serializations: dict[str, int]) -> None:
    nodes = [make_node(f"n{i}").obj() for i in range(10)]
    handle = WasmHandle(nodes=nodes)
    rt = Runtime(cache_dir=tmp_path / "cache")
    plugins = [load(READER, tmp_path / name, handle, name=name, runtime=rt) for name in ("a", "b")]
    infos = handle.snapshot_shared_lister().list()
    pod = make_pod("p").obj()
    for _ in range(3):  # three cycles of the same pod object, two plugins, ten nodes each
        for pl in plugins:
            pl.pre_filter(CycleState(), pod, infos)
            assert filter_statuses(pl, CycleState(), pod, infos) == [None] * 10
    assert serializations == {"Pod": 1, "Node": 10}

    # A new pod object (an update) and a changed node are serialized again, once each.
    updated = Pod()
    updated.CopyFrom(pod)
    updated.metadata.labels["v"] = "2"
    changed = Node()
    changed.CopyFrom(nodes[0])
    changed.metadata.labels["zone"] = "b"
    infos[0].set_node(changed)
    for pl in plugins:
        pl.pre_filter(CycleState(), updated, infos)
        filter_statuses(pl, CycleState(), updated, infos)
    assert serializations == {"Pod": 2, "Node": 11}


@pytest.mark.parametrize("items", [
    [], [""], ["n1"], ["node-1", "node-2.example.com"], ["a", "", "b"],
    ['a"b'], ["back\\slash"], ["tab\there"], ["new\nline"], ["del\x7f"], ["nöde"], ["\u2028"], ["x" * 300] * 500,
])
def test_json_string_list_is_json_bytes(items: list[str]) -> None:
    # The direct join is taken only where it gives the encoder's bytes exactly.
    got = encoding.json_string_list(items)
    assert got == encoding.json_bytes(items)
    assert json.loads(got) == items
