"""Guest stdout/stderr (docs/abi.md §2): the host serves `fd_write` itself and captures fd 1 and 2 into the
instance's buffer, synchronously. wasmtime's custom output streams are never used: their callbacks
run on wasmtime's own threads, and one firing while the interpreter shuts down aborted the process
(exit 134 after the results were printed)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from wasmtime import _wasi

from tests.wasm.harness import load
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.wasi import OUTPUT_LIMIT

ERRNO_SUCCESS, ERRNO_BADF, ERRNO_INVAL = 0, 8, 28
NODE = NodeInfo(make_node("n1").obj())


def probe(tmp_path: Path) -> tuple[Any, Any, Any]:
    """The plugin, a pod pinned to an instance, and that instance."""
    plugin = load("wasi/fd_write_probe", tmp_path)
    pod = make_pod("p").obj()
    plugin.pre_filter(CycleState(), pod, [])
    inst = plugin.pool.instance(plugin.pool.pinned_instance_id(get_pod_key(pod)))  # type: ignore[arg-type]
    assert inst is not None
    return plugin, pod, inst


def write_iovecs(inst: Any, bufs: list[bytes], at: int = 1024, table: int = 256) -> None:
    """Puts bufs into memory from `at` on and their iovec table at `table`."""
    entries = b""
    for b in bufs:
        inst.write_memory(at, b)
        entries += struct.pack("<II", at, len(b))
        at += len(b)
    inst.write_memory(table, entries)
    inst.set_global("iovs_len", len(bufs))


def call(plugin: Any, pod: Any, inst: Any, **globals_: int) -> Any:
    for name, value in globals_.items():
        inst.set_global(name, value)
    return plugin.filter(CycleState(), pod, NODE)


def test_no_wasmtime_custom_output_stream_is_registered(tmp_path: Path) -> None:
    before = len(_wasi.CUSTOM_OUTPUTS.handles)
    plugin, _, _ = probe(tmp_path)
    assert len(_wasi.CUSTOM_OUTPUTS.handles) == before
    plugin.close()
    assert len(_wasi.CUSTOM_OUTPUTS.handles) == before


def test_stdout_and_stderr_are_captured_in_order(tmp_path: Path) -> None:
    plugin, pod, inst = probe(tmp_path)
    write_iovecs(inst, [b"one ", b"two"])
    assert call(plugin, pod, inst, fd=1) is None
    assert inst.get_global("errno") == ERRNO_SUCCESS
    assert struct.unpack("<I", inst.read_memory(512, 4))[0] == 7
    write_iovecs(inst, [b"out\n"])
    st = call(plugin, pod, inst, fd=1)
    assert st is None
    write_iovecs(inst, [b"err\n"])
    call(plugin, pod, inst, fd=2, trap=0)
    write_iovecs(inst, [b"last"])
    st = call(plugin, pod, inst, fd=2, trap=1)
    # Output is cleared after each call: only the failing call's output is in its error.
    assert st.message().startswith("wasm: filter error: last\nwasm error: unreachable")


def test_only_the_last_64_kib_are_kept(tmp_path: Path) -> None:
    plugin, pod, inst = probe(tmp_path)
    big = b"a" * OUTPUT_LIMIT + b"b" * 10
    write_iovecs(inst, [big, b"end"])
    st = call(plugin, pod, inst, fd=1, trap=1)
    captured = st.message().removeprefix("wasm: filter error: ").split("\nwasm error:")[0]
    assert len(captured) == OUTPUT_LIMIT
    assert captured.endswith("b" * 10 + "end")


def test_other_descriptors_are_bad(tmp_path: Path) -> None:
    plugin, pod, inst = probe(tmp_path)
    write_iovecs(inst, [b"x"])
    for fd in (0, 3, 100, -1):
        assert call(plugin, pod, inst, fd=fd) is None
        assert inst.get_global("errno") == ERRNO_BADF


def test_too_many_iovecs_is_einval(tmp_path: Path) -> None:
    plugin, pod, inst = probe(tmp_path)
    write_iovecs(inst, [b"x"])
    assert call(plugin, pod, inst, fd=1, iovs_len=1025) is None
    assert inst.get_global("errno") == ERRNO_INVAL


def test_iovec_outside_memory_traps(tmp_path: Path) -> None:
    plugin, pod, inst = probe(tmp_path)
    inst.write_memory(256, struct.pack("<II", 0x1FFF0, 64))  # memory is 2 pages (0x20000)
    st = call(plugin, pod, inst, fd=1, iovs_len=1)
    assert "host function wasi_snapshot_preview1.fd_write failed: out of bounds memory access" in st.message()


def test_nwritten_outside_memory_traps(tmp_path: Path) -> None:
    plugin, pod, inst = probe(tmp_path)
    write_iovecs(inst, [b"x"])
    st = call(plugin, pod, inst, fd=1, nwritten=0x20000)
    assert "host function wasi_snapshot_preview1.fd_write failed: out of bounds memory access" in st.message()
