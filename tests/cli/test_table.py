"""The table output: one line per pod whatever its message, the summary counts every phase."""

from __future__ import annotations

from typing import Any

from wasmsched.cli.table import format_table, one_line, summary_line

TRAP = ("wasm: filter error: panic: boom\nwasm error: unreachable\nwasm stack trace:\n\tguest.runtime.gopanic\n"
        "\tguest.main.filter")


def _doc(message: str) -> dict[str, Any]:
    pod = {"namespace": "default", "name": "p", "node": None, "phase": "Error", "message": message,
           "nominatedNode": None, "attempts": 5}
    summary = {"scheduled": 0, "unschedulable": 0, "preempted": 0, "error": 1, "ignored": 0, "running": 0,
               "seconds": 0.5}
    return {"pods": [pod], "events": [], "summary": summary}


def test_a_wasm_stack_trace_stays_out_of_the_table() -> None:
    lines = format_table(_doc(TRAP)).splitlines()
    assert len(lines) == 4
    assert lines[1].endswith("wasm: filter error: panic: boom [4 more lines in -o json]")


def test_one_line() -> None:
    assert one_line("plain") == "plain"
    assert one_line("a\nb") == "a [1 more line in -o json]"


def test_summary_counts_error_ignored_and_running_pods_when_there_are_any() -> None:
    s = {"scheduled": 0, "unschedulable": 0, "preempted": 0, "error": 200, "ignored": 0, "running": 0,
         "seconds": 1.0}
    assert summary_line(s) == "0 scheduled, 0 unschedulable, 0 preempted, 200 error in 1.000s"
    s.update(error=0, ignored=2, running=3)
    assert summary_line(s) == "0 scheduled, 0 unschedulable, 0 preempted, 2 ignored, 3 running in 1.000s"
