"""The process Engine and its epoch ticker (docs/abi.md §9 timeouts; docs/architecture.md: one Engine per process)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from tests.wasm.harness import load
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code
from wasmsched.framework.types import NodeInfo
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm import loader
from wasmsched.wasm.engine import Runtime, default_runtime
from wasmsched.wasm.errors import WasmLoadError

ENDLESS = """(module (memory (export "memory") 1 1)
  (func (export "filter") (result i32) (loop $l (br $l)) (i32.const 0)))"""


def test_every_runtime_shares_the_process_engine(tmp_path: Path) -> None:
    a, b = Runtime(cache_dir=tmp_path / "a"), Runtime(cache_dir=tmp_path / "b")
    assert a.engine is b.engine is default_runtime().engine


def test_deadlines_still_fire_after_many_runtimes_came_and_went(tmp_path: Path) -> None:
    # A ticker that iterated dying engines once crashed the process or stopped ticking, after which
    # an endless guest loop ran forever.
    for _ in range(300):
        Runtime(cache_dir=tmp_path)
    gc.collect()
    plugin = load(ENDLESS, tmp_path, timeout="50ms")
    pod = make_pod("p").obj()
    node = make_node("n1").obj()
    plugin.pre_filter(CycleState(), pod, [])
    st = plugin.filter(CycleState(), pod, NodeInfo(node))
    assert st is not None and st.code == Code.ERROR
    assert "timeout after 50ms" in st.message()


def test_webassembly_text_is_not_a_guest(tmp_path: Path) -> None:
    # wasmtime itself would assemble text; a guest must be a binary module.
    rt = Runtime(cache_dir=tmp_path)
    with pytest.raises(WasmLoadError, match=r"^wasm: error compiling guest: not a WebAssembly binary"):
        rt.compile(b'(module (memory (export "memory") 1))')
    with pytest.raises(WasmLoadError, match=r"^wasm: error compiling guest: "):
        rt.compile(b"\x00asm\x01\x00\x00\x00\xff\xff")
    assert rt.compiled == 0


def test_guest_larger_than_the_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.wasm"
    big.write_bytes(b"\x00asm" + bytes(100))
    monkeypatch.setattr(loader, "MAX_GUEST_BYTES", 64)
    with pytest.raises(WasmLoadError, match=r"^wasm: error reading guestURL .*big\.wasm: .*larger than 64 bytes"):
        loader.fetch_guest(str(big))


def test_guests_start_no_runtime_threads(tmp_path: Path) -> None:
    """WASI is the native host's (wasm/wasi.py), not wasmtime's, whose context starts tokio worker
    threads (compiling a module may still leave Cranelift's worker pool)."""
    import os

    plugin = load("wasi/sandbox_probe", tmp_path)
    pod = make_pod("p").obj()
    plugin.pre_filter(CycleState(), pod, [])
    assert plugin.filter(CycleState(), pod, NodeInfo(make_node("n1").obj())) is None
    names = [Path(f"/proc/self/task/{t}/comm").read_text().strip() for t in os.listdir("/proc/self/task")]
    assert not [n for n in names if n.startswith("tokio")], names
