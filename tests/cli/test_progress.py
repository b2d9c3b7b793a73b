"""The progress line of `simulate`: on a terminal only, rewritten in place, blanked before the results;
never with -o json/yaml, --quiet, or a stderr that is not a terminal."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys

import pytest

from tests.cli.terminal import ROOT, run_on_terminal
from wasmsched.cli.progress import DELAY_ENV, ProgressLine, progress_text, show_progress
from wasmsched.simulator.simulation import Progress

# The line's first update comes at once (not after a second), so a short run shows it.
AT_ONCE = {DELAY_ENV: "0"}
WORKLOAD = ["simulate", "--generate", "nodes=20,pods=300"]


def test_a_terminal_shows_the_progress_line_then_blanks_it() -> None:
    code, out = run_on_terminal(WORKLOAD, AT_ONCE)
    assert code == 0, out
    first = out.index("\rsimulate ")
    assert "/300 scheduled, " in out and " pods/s" in out
    # Each update starts with \r; the last one is blanked with spaces before the results come.
    blank = out.index("\r" + " " * 10)
    assert first < blank < out.index("300 scheduled, 0 unschedulable")
    assert "\n" not in out[first:blank]


def test_no_progress_line_with_quiet_or_json_or_yaml() -> None:
    for extra in (["--quiet"], ["-q"], ["-o", "json"], ["-o", "yaml"]):
        code, out = run_on_terminal(WORKLOAD + extra, AT_ONCE)
        assert code == 0, out
        assert "pods/s" not in out, extra
    code, out = run_on_terminal([*WORKLOAD, "-o", "json"], AT_ONCE)
    assert json.loads(out)["summary"]["scheduled"] == 300


def test_no_progress_line_when_stderr_is_not_a_terminal() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **AT_ONCE}
    proc = subprocess.run([sys.executable, "-m", "wasmsched", *WORKLOAD], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "\r" not in proc.stdout


def test_the_line_waits_for_its_delay_and_is_cut_to_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")  # a StringIO has no terminal: the width comes from COLUMNS
    class Sim:
        def progress(self) -> Progress:
            return Progress(total=100, scheduled=40, pending=50, unschedulable=10, seconds=2.0)

    out = io.StringIO()
    late = ProgressLine(out, "simulate", delay=3600)
    late.update(Sim())  # type: ignore[arg-type]
    assert out.getvalue() == ""
    line = ProgressLine(out, "simulate", delay=0)
    line.update(Sim())  # type: ignore[arg-type]
    assert out.getvalue() == "\r" + progress_text("simulate", Sim().progress())[:39]
    line.clear()
    assert out.getvalue().endswith("\r" + " " * 39 + "\r")


def test_progress_text() -> None:
    p = Progress(total=5000, scheduled=1200, pending=3700, unschedulable=100, seconds=75.0)
    assert progress_text("simulate", p) == ("simulate 1m15s  1200/5000 scheduled, 3700 pending, 100 unschedulable, "
                                            "16 pods/s")


def test_a_log_record_blanks_the_line_first(monkeypatch: pytest.MonkeyPatch) -> None:
    class Sim:
        on_cycle = None

        def progress(self) -> Progress:
            return Progress(total=1, scheduled=0, pending=1, unschedulable=0, seconds=0.5)

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    root = logging.getLogger("wasmsched")
    root.addHandler(handler)
    try:
        monkeypatch.setenv(DELAY_ENV, "0")
        sim = Sim()
        with show_progress(sim, "simulate", out):  # type: ignore[arg-type]
            sim.on_cycle(sim)  # type: ignore[misc]
            root.warning("careful")
    finally:
        root.removeHandler(handler)
    drawn = "\r" + progress_text("simulate", sim.progress())
    blank = "\r" + " " * (len(drawn) - 1) + "\r"
    assert out.getvalue() == drawn + blank + "careful\n"
    assert sim.on_cycle is None
