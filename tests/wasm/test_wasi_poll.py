"""A guest sleeping in WASI poll_oneoff is bound by its call's deadline (docs/abi.md §9: time in imports
counts), and poll_oneoff/clock_time_get otherwise behave as WASI preview 1 specifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.wasm.harness import load, wat_source
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm import interrupt
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.wasi import (
    ERRNO_BADF,
    ERRNO_INVAL,
    EVENTRWFLAGS_HANGUP,
    EVENTTYPE_CLOCK,
    EVENTTYPE_FD_READ,
)

MS = 1_000_000


@pytest.fixture(autouse=True)
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The seconds the host's poll_oneoff asked to sleep, call by call (it still sleeps them)."""
    asked: list[float] = []
    real = interrupt.sleep

    def record(seconds: float) -> None:
        asked.append(seconds)
        real(seconds)

    monkeypatch.setattr(interrupt, "sleep", record)
    return asked


def run(tmp_path: Path, mode: int, sleep_ns: int, timeout: str = "1s", clock_id: int = 1):  # type: ignore[no-untyped-def]
    plugin = load("wasi/poll_probe", tmp_path, timeout=timeout)
    pod = make_pod("p").obj()
    plugin.pre_filter(CycleState(), pod, [])
    inst: Any = plugin.pool.instance(plugin.pool.pinned_instance_id(get_pod_key(pod)))  # type: ignore[arg-type]
    inst.set_global("mode", mode)
    inst.set_global("sleep_ns", sleep_ns)
    inst.set_global("clock_id", clock_id)
    st = plugin.filter(CycleState(), pod, NodeInfo(make_node("n1").obj()))
    return plugin, inst, st


def test_a_short_sleep_returns_its_clock_event(tmp_path: Path, sleeps: list[float]) -> None:
    _, inst, st = run(tmp_path, mode=0, sleep_ns=30 * MS)
    assert st is None
    # One sleep until the clock event's wake-up, 30 ms after the call started.
    assert len(sleeps) == 1 and 0 < sleeps[0] <= 0.03, sleeps
    assert (inst.get_global("errno"), inst.get_global("nevents")) == (0, 1)
    assert (inst.get_global("ev_userdata"), inst.get_global("ev_error"), inst.get_global("ev_type")) == (
        0x11, 0, EVENTTYPE_CLOCK)


def test_a_sleep_past_the_deadline_is_stopped_at_the_deadline(tmp_path: Path, sleeps: list[float]) -> None:
    plugin, _, st = run(tmp_path, mode=0, sleep_ns=3600 * 1000 * MS, timeout="100ms")
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith("wasm: filter error: wasm error: timeout after 100ms"), st.message()
    # The hour-long sleep is cut to what is left of the call's 100 ms.
    assert len(sleeps) == 1 and 0 <= sleeps[0] <= 0.1, sleeps
    assert plugin.counters()["discarded"] == 1


@pytest.mark.parametrize("clock_id", [0, 1])  # realtime, monotonic: the clocks the guest reads
def test_an_absolute_deadline_uses_the_guests_clock(tmp_path: Path, clock_id: int, sleeps: list[float]) -> None:
    _, inst, st = run(tmp_path, mode=1, sleep_ns=30 * MS, clock_id=clock_id)
    assert st is None
    # The guest asked to wake at its clock's now + 30 ms: the host sleeps until then, not 30 ms past
    # the clock's epoch (an absolute time read as relative would be decades) nor not at all.
    assert len(sleeps) == 1 and 0 < sleeps[0] <= 0.03, sleeps
    assert (inst.get_global("errno"), inst.get_global("nevents"), inst.get_global("ev_type")) == (
        0, 1, EVENTTYPE_CLOCK)


def test_stdin_is_ready_at_eof_so_nothing_sleeps(tmp_path: Path, sleeps: list[float]) -> None:
    _, inst, st = run(tmp_path, mode=2, sleep_ns=3600 * 1000 * MS)
    assert st is None and sleeps == []
    assert inst.get_global("nevents") == 1
    assert (inst.get_global("ev_userdata"), inst.get_global("ev_type"), inst.get_global("ev_flags")) == (
        0x22, EVENTTYPE_FD_READ, EVENTRWFLAGS_HANGUP)


def test_other_descriptors_do_not_exist(tmp_path: Path) -> None:
    _, inst, st = run(tmp_path, mode=3, sleep_ns=0)
    assert st is None
    assert (inst.get_global("nevents"), inst.get_global("ev_error")) == (1, ERRNO_BADF)


def test_no_subscriptions_is_invalid(tmp_path: Path) -> None:
    _, inst, st = run(tmp_path, mode=4, sleep_ns=0)
    assert st is None
    assert inst.get_global("errno") == ERRNO_INVAL


def test_sleeping_in_start_is_bound_by_start_timeout(tmp_path: Path, sleeps: list[float]) -> None:
    wat = wat_source("wasi/poll_probe").replace(
        '(global $start_sleep_ns (export "start_sleep_ns") (mut i64) (i64.const 0))',
        '(global $start_sleep_ns (export "start_sleep_ns") (mut i64) (i64.const 3600000000000))')
    with pytest.raises(WasmLoadError) as e:
        load(wat, tmp_path, startTimeout="100ms")
    assert len(sleeps) == 1 and 0 <= sleeps[0] <= 0.1, sleeps
    assert str(e.value).startswith(
        "failed to create a guest pool: wasm: instantiate error: wasm error: timeout after 100ms"), str(e.value)
