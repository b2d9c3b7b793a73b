"""A guest exhausting one resource in a call (tests/wat/faults/exhaust.wat): each ends bounded, as the
call's Error status or a refused grow, and neither the next pod on the same plugin nor another plugin
notices (docs/abi.md §9 limits, §10 texts)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.wasm.harness import WasmHandle, load
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NodeInfo
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm import native
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.instance import TABLE_ELEMENTS_LIMIT
from wasmsched.wasm.plugin import WasmPlugin

LIMIT_PAGES = 64
NODE = NodeInfo(make_node("n1").obj())


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    return Runtime(cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture
def plugins(tmp_path: Path, runtime: Runtime) -> Iterator[tuple[WasmPlugin, WasmPlugin, WasmHandle]]:
    handle = WasmHandle()
    hog = load("faults/exhaust", tmp_path / "hog", handle, name="hog", runtime=runtime, timeout="300ms",
               memoryLimitPages=LIMIT_PAGES)
    bystander = load("faults/exhaust", tmp_path / "other", handle, name="other", runtime=runtime)
    yield hog, bystander, handle
    hog.close()
    bystander.close()


def run(plugin: WasmPlugin, pod: str, mode: int = 0) -> tuple[Status | None, Any]:
    """Filter for pod on the plugin's one idle instance, in `mode`."""
    plugin.filter(CycleState(), make_pod(f"warm-{pod}").obj(), NODE)  # an instance exists and is idle
    (inst,) = plugin.pool.instances()
    inst.set_global("mode", mode)
    return plugin.filter(CycleState(), make_pod(pod).obj(), NODE), inst


def assert_unaffected(hog: WasmPlugin, bystander: WasmPlugin) -> None:
    assert run(hog, "next")[0] is None  # the same plugin's next pod, on a fresh instance
    assert run(bystander, "other")[0] is None


def failed(st: Status | None, text: str) -> None:
    assert st is not None and st.code == Code.ERROR and text in st.message(), st and st.message()


def test_stack_overflow_is_the_calls_error(plugins: Any) -> None:
    hog, other, _ = plugins
    st, _ = run(hog, "p", 1)
    failed(st, "wasm: filter error: wasm error: stack overflow")
    assert_unaffected(hog, other)


def test_a_table_grows_to_its_limit_and_no_further(plugins: Any) -> None:
    hog, other, _ = plugins
    st, inst = run(hog, "p", 2)
    assert st is None
    # 2^31-1 more elements: refused (-1), not 16 GiB; then exactly up to the limit
    assert (inst.get_global("r1"), inst.get_global("r2"), inst.get_global("r3")) == (-1, 1, TABLE_ELEMENTS_LIMIT)
    assert_unaffected(hog, other)


def test_memory_grows_to_its_limit_in_one_call_and_no_further(plugins: Any) -> None:
    hog, other, _ = plugins
    st, inst = run(hog, "p", 3)
    assert st is None
    assert (inst.get_global("r1"), inst.get_global("r2"), inst.get_global("r3")) == (-1, 1, LIMIT_PAGES)
    assert inst.memory_pages() == LIMIT_PAGES
    assert_unaffected(hog, other)


def test_100_mib_of_klog_lines_in_one_call_go_to_the_sink_and_end(plugins: Any, tmp_path: Path,
                                                                   runtime: Runtime) -> None:
    hog, other, handle = plugins
    patient = load("faults/exhaust", tmp_path / "patient", handle, name="patient", runtime=runtime, timeout="60s",
                   memoryLimitPages=LIMIT_PAGES)
    sink = tmp_path / "klog"
    fd = os.open(sink, os.O_WRONLY | os.O_CREAT)
    try:
        native.set_log_sink(fd, b"IWEE")  # formatted natively, as with the CLI's sink
        st, _ = run(patient, "p", 4)
    finally:
        native.set_log_sink(-1, b"IWEE")
        os.close(fd)
        patient.close()
    assert st is None
    with sink.open("rb") as f:
        lines = [len(line) for line in f]
    sink.unlink()
    assert len(lines) == 100 and all(n > 1 << 20 for n in lines)
    assert_unaffected(hog, other)


def test_100_mib_on_stdout_keeps_the_last_64_kib(plugins: Any) -> None:
    hog, other, _ = plugins
    st, inst = run(hog, "p", 5)
    assert st is None
    out = inst.native.output()
    assert len(out) == 64 << 10 and set(out) == {ord("x")}
    assert_unaffected(hog, other)


def test_an_eventf_storm_ends_at_the_calls_deadline(plugins: Any) -> None:
    hog, other, handle = plugins
    st, _ = run(hog, "p", 6)
    failed(st, "wasm: filter error: wasm error: timeout after 300ms")
    storm = [e for e in handle.recorder.events if e["reason"] == "Storm"]
    assert storm and all(e["type"] == "Normal" for e in storm)
    assert_unaffected(hog, other)


@pytest.mark.parametrize("mode", [7, 8], ids=["relative", "absolute"])
def test_poll_oneoff_with_the_largest_timeout_wakes_at_the_calls_deadline(plugins: Any, mode: int) -> None:
    hog, other, _ = plugins
    st, _ = run(hog, "p", mode)
    failed(st, "wasm: filter error: wasm error: timeout after 300ms")
    assert_unaffected(hog, other)
