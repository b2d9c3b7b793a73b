"""A guest sleeping in WASI poll_oneoff is bound by its call's deadline (docs/abi.md §9: time in imports
counts), and poll_oneoff/clock_time_get otherwise behave as WASI preview 1 specifies."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.wasm.harness import load, wat_source
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.wasi import (
    ERRNO_BADF,
    ERRNO_INVAL,
    EVENTRWFLAGS_HANGUP,
    EVENTTYPE_CLOCK,
    EVENTTYPE_FD_READ,
)

MS = 1_000_000


def run(tmp_path: Path, mode: int, sleep_ns: int, timeout: str = "1s", clock_id: int = 1):  # type: ignore[no-untyped-def]
    plugin = load("wasi/poll_probe", tmp_path, timeout=timeout)
    pod = make_pod("p").obj()
    plugin.pre_filter(CycleState(), pod, [])
    inst: Any = plugin.pool.instance(plugin.pool.pinned_instance_id(get_pod_key(pod)))  # type: ignore[arg-type]
    inst.set_global("mode", mode)
    inst.set_global("sleep_ns", sleep_ns)
    inst.set_global("clock_id", clock_id)
    t0 = time.monotonic()
    st = plugin.filter(CycleState(), pod, NodeInfo(make_node("n1").obj()))
    return plugin, inst, st, time.monotonic() - t0


def test_a_short_sleep_returns_its_clock_event(tmp_path: Path) -> None:
    _, inst, st, elapsed = run(tmp_path, mode=0, sleep_ns=30 * MS)
    assert st is None
    assert elapsed >= 0.03
    assert (inst.get_global("errno"), inst.get_global("nevents")) == (0, 1)
    assert (inst.get_global("ev_userdata"), inst.get_global("ev_error"), inst.get_global("ev_type")) == (
        0x11, 0, EVENTTYPE_CLOCK)


def test_a_sleep_past_the_deadline_is_stopped_at_the_deadline(tmp_path: Path) -> None:
    plugin, _, st, elapsed = run(tmp_path, mode=0, sleep_ns=3600 * 1000 * MS, timeout="100ms")
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith("wasm: filter error: wasm error: timeout after 100ms"), st.message()
    assert 0.09 <= elapsed < 2.0, elapsed
    assert plugin.counters()["discarded"] == 1


@pytest.mark.parametrize("clock_id", [0, 1])  # realtime, monotonic: the clocks the guest reads
def test_an_absolute_deadline_uses_the_guests_clock(tmp_path: Path, clock_id: int) -> None:
    _, inst, st, elapsed = run(tmp_path, mode=1, sleep_ns=30 * MS, clock_id=clock_id)
    assert st is None
    assert 0.02 <= elapsed < 1.0, elapsed
    assert (inst.get_global("errno"), inst.get_global("nevents"), inst.get_global("ev_type")) == (
        0, 1, EVENTTYPE_CLOCK)


def test_stdin_is_ready_at_eof_so_nothing_sleeps(tmp_path: Path) -> None:
    _, inst, st, elapsed = run(tmp_path, mode=2, sleep_ns=3600 * 1000 * MS)
    assert st is None and elapsed < 0.5
    assert inst.get_global("nevents") == 1
    assert (inst.get_global("ev_userdata"), inst.get_global("ev_type"), inst.get_global("ev_flags")) == (
        0x22, EVENTTYPE_FD_READ, EVENTRWFLAGS_HANGUP)


def test_other_descriptors_do_not_exist(tmp_path: Path) -> None:
    _, inst, st, _ = run(tmp_path, mode=3, sleep_ns=0)
    assert st is None
    assert (inst.get_global("nevents"), inst.get_global("ev_error")) == (1, ERRNO_BADF)


def test_no_subscriptions_is_invalid(tmp_path: Path) -> None:
    _, inst, st, _ = run(tmp_path, mode=4, sleep_ns=0)
    assert st is None
    assert inst.get_global("errno") == ERRNO_INVAL


def test_sleeping_in_start_is_bound_by_start_timeout(tmp_path: Path) -> None:
    wat = wat_source("wasi/poll_probe").replace(
        '(global $start_sleep_ns (export "start_sleep_ns") (mut i64) (i64.const 0))',
        '(global $start_sleep_ns (export "start_sleep_ns") (mut i64) (i64.const 3600000000000))')
    t0 = time.monotonic()
    with pytest.raises(WasmLoadError) as e:
        load(wat, tmp_path, startTimeout="100ms")
    assert time.monotonic() - t0 < 2.0
    assert str(e.value).startswith(
        "failed to create a guest pool: wasm: instantiate error: wasm error: timeout after 100ms"), str(e.value)
