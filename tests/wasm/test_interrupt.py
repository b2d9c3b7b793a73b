"""Ctrl-C and SIGTERM stop `wasmsched simulate` even while a guest without a deadline (`timeout` /
`startTimeout` "0s") loops or sleeps (wasm/interrupt.py); a looping guest never starves other threads."""

from __future__ import annotations

import logging
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.wasm.harness import load
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.types import NodeInfo
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.wasm import interrupt

from .harness import compile_wat

ROOT = Path(__file__).resolve().parents[2]
# Generous bounds for a loaded CI machine: they only bound a failing test.
STARTED_WITHIN = 60.0
ENDED_WITHIN = 20.0
NODE = NodeInfo(make_node("n1").obj())


def _default_sigint() -> None:
    """In the child: SIGINT's default action, even when the suite runs with SIGINT ignored (a background
    job of a non-interactive shell does, and exec keeps an ignored signal ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_simulate(tmp_path: Path, guest: str, **args: str) -> tuple[subprocess.Popen[str], queue.Queue[str]]:
    """`wasmsched simulate` with the guest as a wasm plugin, in a child process; returns it once the
    guest has logged "looping" (it is then inside the endless part), with its stderr lines so far."""
    wasm = compile_wat(guest, tmp_path / "guests", "guest.wasm")
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler",
                         "plugins": {"multiPoint": {"enabled": [{"name": "Endless"}]}},
                         "pluginConfig": [{"name": "Endless", "args": {"guestURL": str(wasm), **args}}]}]}
    (tmp_path / "scheduler.yaml").write_text(yaml.safe_dump(cfg))
    cap = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    cluster = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                "status": {"capacity": cap, "allocatable": cap}},
               {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "pause"}]}}]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(cluster))
    proc = subprocess.Popen([sys.executable, "-m", "wasmsched.cli.main", "simulate", "--config",
                             str(tmp_path / "scheduler.yaml"), str(tmp_path / "cluster.yaml")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "WASMSCHED_CACHE_DIR": str(tmp_path / "cache")},
                            preexec_fn=_default_sigint)  # noqa: PLW1509 - only resets a signal disposition
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stderr is not None
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True).start()  # type: ignore[union-attr,func-returns-value]
    try:
        while True:
            line = lines.get(timeout=STARTED_WITHIN)
            if '"looping" plugin="Endless"' in line:
                return proc, lines
    except BaseException:
        proc.kill()
        proc.communicate()
        raise


def stop(proc: subprocess.Popen[str], lines: queue.Queue[str], sig: int) -> tuple[int, str]:
    proc.send_signal(sig)
    try:
        proc.wait(ENDED_WITHIN)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"still running {ENDED_WITHIN}s after signal {sig}")
    assert proc.stdout is not None
    proc.stdout.read()
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    return proc.returncode, "".join(rest)


CASES = [("interrupt/start_loop", {"startTimeout": "0s"}),
         ("interrupt/filter_loop", {"timeout": "0s"}),
         ("interrupt/filter_sleep", {"timeout": "0s"})]
IDS = ["start-loops", "filter-loops", "filter-sleeps"]


@pytest.mark.parametrize(("guest", "args"), CASES, ids=IDS)
def test_ctrl_c_stops_a_guest_without_deadline(tmp_path: Path, guest: str, args: dict[str, str]) -> None:
    proc, lines = start_simulate(tmp_path, guest, **args)
    rc, err = stop(proc, lines, signal.SIGINT)
    assert rc == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err


@pytest.mark.parametrize(("guest", "args"), CASES[:2], ids=IDS[:2])
def test_sigterm_ends_the_run(tmp_path: Path, guest: str, args: dict[str, str]) -> None:
    proc, lines = start_simulate(tmp_path, guest, **args)
    rc, _ = stop(proc, lines, signal.SIGTERM)
    assert rc in (-signal.SIGTERM, 128 + signal.SIGTERM)


# ----- in this process ----------------------------------------------------------------------------

def pinned(plugin: Any) -> tuple[Any, Any]:
    pod = make_pod("p").obj()
    plugin.pre_filter(CycleState(), pod, [])
    return pod, plugin.pool.instances()[0]


@pytest.fixture
def no_pending_interrupt() -> Any:
    interrupt.reset()
    yield
    interrupt.reset()


def test_pending_interrupt_stops_a_call_on_a_worker_thread(tmp_path: Path, no_pending_interrupt: None,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """Binding cycles run guests on worker threads, where no signal handler runs: they stop too."""
    caplog.set_level(logging.INFO, logger="wasmsched.wasm.guest")
    plugin = load("interrupt/filter_loop", tmp_path, timeout="0s")
    pod, _ = pinned(plugin)
    raised: list[BaseException] = []
    entered = threading.Event()
    plugin.compiled.host.guest_log.addFilter(lambda _: entered.set() or True)  # type: ignore[func-returns-value]  # the guest logs, then loops

    def run() -> None:
        try:
            plugin.filter(CycleState(), pod, NODE)
        except BaseException as e:  # noqa: BLE001 - the test looks at it
            raised.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert entered.wait(STARTED_WITHIN)
    interrupt.state.pending = True
    t.join(ENDED_WITHIN)
    assert not t.is_alive()
    assert [type(e) for e in raised] == [KeyboardInterrupt]


def test_a_looping_guest_lets_other_threads_run(tmp_path: Path) -> None:
    """Guest code holds the GIL (wasm/_host.c), but every slice of guest execution hands it over: a
    Python thread makes progress while a guest loops until its deadline, and the deadline is kept."""
    plugin = load("interrupt/filter_loop", tmp_path, timeout="2s")
    pod, _ = pinned(plugin)
    ticks = []
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.001)

    t = threading.Thread(target=count, daemon=True)
    t.start()
    st = plugin.filter(CycleState(), pod, NODE)
    seen = len(ticks)
    stop.set()
    t.join(ENDED_WITHIN)
    assert st is not None and st.message().startswith("wasm: filter error: wasm error: timeout after 2s")
    assert seen > 10  # the other thread ran during the 2 s the guest looped


def test_timeout_text_is_the_same_when_the_other_phase_has_no_limit(tmp_path: Path) -> None:
    """With startTimeout "0s" the store has the epoch callback; a call's timeout reads as without it."""
    texts = []
    for i, start in enumerate(("10s", "0s")):
        plugin = load("interrupt/filter_loop", tmp_path / str(i), timeout="50ms", startTimeout=start)
        pod, _ = pinned(plugin)
        st = plugin.filter(CycleState(), pod, NODE)
        assert st is not None
        texts.append(st.message())
    assert texts[0] == texts[1]
    assert texts[0].startswith("wasm: filter error: wasm error: timeout after 50ms\nwasm stack trace:\n\t"), texts[0]
