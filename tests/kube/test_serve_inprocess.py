"""`run`'s serving sequence in-process (cli/run.py `_serve` and `_elector`), with a recording app and a
scripted leader elector: kube-scheduler's order (informers synced, then scheduling; on SIGTERM or a lost
lease: no pod popped, bindings in flight finished, then the lease let go), and its exit codes."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from wasmsched.cli import run as run_mod
from wasmsched.kube.app import install_signal_handlers
from wasmsched.kube.leaderelection import LeaderElectionConfig


class RecordingApp:
    def __init__(self, synced: bool = True) -> None:
        self.stop = threading.Event()
        self.lost_lease = False
        self.api = SimpleNamespace(host="https://127.0.0.1:1")
        self.calls: list[str] = []
        self._synced = synced

    def start_informers(self) -> bool:
        self.calls.append("start_informers")
        return self._synced

    def start_scheduling(self) -> None:
        self.calls.append("start_scheduling")

    def stop_scheduling(self) -> None:
        self.calls.append("stop_scheduling")

    def wait_for_bindings(self) -> None:
        self.calls.append("wait_for_bindings")


@pytest.fixture
def restore_signals() -> Iterator[None]:
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in saved.items():
            signal.signal(s, h)


def _when(cond: Callable[[], bool], then: Callable[[], None]) -> threading.Thread:
    """Runs `then` on a thread as soon as `cond` holds (bounded: 10 s)."""
    def watch() -> None:
        done = threading.Event()
        for _ in range(1000):
            if cond():
                then()
                return
            done.wait(0.01)
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def test_sigterm_stops_scheduling_then_waits_for_bindings(restore_signals: None) -> None:
    app = RecordingApp()
    install_signal_handlers(app.stop)
    _when(lambda: "start_scheduling" in app.calls, lambda: os.kill(os.getpid(), signal.SIGTERM))
    rc = run_mod._serve(app, None)  # type: ignore[arg-type]
    assert rc == 0
    assert app.calls == ["start_informers", "start_scheduling", "stop_scheduling", "wait_for_bindings"]


def test_stopped_before_the_caches_synced_schedules_nothing() -> None:
    app = RecordingApp(synced=False)
    assert run_mod._serve(app, None) == 0  # type: ignore[arg-type]
    assert app.calls == ["start_informers"]


class ScriptedElector:
    """LeaderElector's shape: leads at once, then loses the lease; records when it is told to stop."""

    def __init__(self, lock: Any, le: LeaderElectionConfig, identity: str,
                 started: Callable[[threading.Event], None], stopped: Callable[[], None]) -> None:
        self.started = started
        self.calls: list[str] = []

    def run(self, stop: threading.Event) -> None:
        leading_ended = threading.Event()
        leading = threading.Thread(target=self.started, args=(leading_ended,), daemon=True)
        leading.start()
        leading_ended.set()  # the lease is lost
        leading.join(10)
        stop.wait(10)
        self.calls.append("elector_stopped")


def test_a_lost_lease_exits_1_after_the_bindings_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    app = RecordingApp()
    monkeypatch.setattr(run_mod, "LeaderElector", ScriptedElector)
    monkeypatch.setattr(run_mod, "lock_client", lambda api: None)
    elector = run_mod._elector(app, LeaderElectionConfig())  # type: ignore[arg-type]
    log: list[str] = []
    app.calls = log
    elector.calls = log  # type: ignore[attr-defined]
    rc = run_mod._serve(app, elector)  # type: ignore[arg-type]
    assert rc == 1 and app.lost_lease
    # Scheduling starts only when leading; the lost lease stops it; the bindings in flight finish before
    # the elector lets the lease go.
    assert log == ["start_informers", "start_scheduling", "stop_scheduling", "stop_scheduling",
                   "wait_for_bindings", "elector_stopped"]


def test_while_serving_the_heaps_free_pages_go_back_every_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []

    def release() -> bool:
        calls.append(1.0)
        return True

    monkeypatch.setattr("wasmsched.util.heap.release_free_memory", release)
    monkeypatch.setattr(run_mod, "HEAP_SCAVENGE_SECONDS", 0.0)
    app = RecordingApp()
    _when(lambda: len(calls) >= 3, app.stop.set)
    give_up = threading.Timer(10.0, app.stop.set)  # without the scavenger, the test fails rather than hangs
    give_up.start()
    try:
        assert run_mod._serve(app, None) == 0  # type: ignore[arg-type]
    finally:
        give_up.cancel()
    assert len(calls) >= 3
