"""The table output: one line per pod whatever its message, the summary counts every phase."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import yaml

from wasmsched.cli.main import main
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


# ----- long tables ----------------------------------------------------------------------------------

def _many(phases: list[str]) -> dict[str, Any]:
    pods = [{"namespace": "default", "name": f"pod-{i:05d}", "node": "n" if ph == "Scheduled" else None,
             "phase": ph, "message": "", "nominatedNode": None, "attempts": 1} for i, ph in enumerate(phases)]
    summary = {"scheduled": phases.count("Scheduled"), "unschedulable": phases.count("Unschedulable"),
               "preempted": phases.count("Preempted"), "error": 0, "ignored": 0, "running": 0, "seconds": 30.0}
    return {"pods": pods, "events": [], "summary": summary}


def test_twenty_thousand_pods_list_only_those_to_look_at() -> None:
    phases = ["Scheduled"] * 20000
    phases[7] = phases[19990] = "Unschedulable"
    phases[500] = "Preempted"
    lines = format_table(_many(phases), limit=50).splitlines()
    assert [line.split()[1] for line in lines[1:4]] == ["pod-00007", "pod-00500", "pod-19990"]
    assert lines[4:] == [
        "",
        "19997 of 20000 pods not listed (19997 Scheduled): --all or --limit N lists more, -o json every pod",
        "19997 scheduled, 2 unschedulable, 1 preempted in 30.000s",
    ]


def test_the_limit_caps_the_listed_pods_and_all_lists_every_one() -> None:
    doc = _many(["Unschedulable"] * 60 + ["Scheduled"] * 40)
    lines = format_table(doc, limit=50).splitlines()
    assert len(lines) == 1 + 50 + 3
    assert lines[-2].startswith("50 of 100 pods not listed (10 Unschedulable, 40 Scheduled)")
    assert len(format_table(doc).splitlines()) == 1 + 100 + 2  # limit None: --all


def test_up_to_the_limit_every_pod_is_listed() -> None:
    doc = _many(["Scheduled"] * 50)
    lines = format_table(doc, limit=50).splitlines()
    assert len(lines) == 1 + 50 + 2 and "not listed" not in lines[-2]


def test_nothing_to_look_at_leaves_no_header() -> None:
    assert format_table(_many(["Scheduled"] * 60), limit=50).splitlines() == [
        "60 of 60 pods not listed (60 Scheduled): --all or --limit N lists more, -o json every pod",
        "60 scheduled, 0 unschedulable, 0 preempted in 30.000s",
    ]


def test_an_interrupted_summary_counts_the_pending_pods() -> None:
    s = {"scheduled": 3, "unschedulable": 1, "preempted": 0, "error": 0, "ignored": 0, "running": 0,
         "seconds": 2.0, "pending": 19996, "interrupted": True}
    assert summary_line(s) == "3 scheduled, 1 unschedulable, 0 preempted, 19996 pending in 2.000s (interrupted)"


def _simulate(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["simulate", "--generate", "nodes=3,pods=80", *argv]) == 0
    return out.getvalue()


def test_simulate_limits_the_table_and_not_json() -> None:
    default = _simulate([]).splitlines()
    assert "pods not listed" in default[-2]
    assert all(" Scheduled " not in line for line in default)
    assert sum(" Scheduled " in line for line in _simulate(["--all"]).splitlines()) == 47
    assert len(_simulate(["--limit", "0"]).splitlines()) == 2
    assert len(json.loads(_simulate(["-o", "json"]))["pods"]) == 80
    assert len(yaml.safe_load(_simulate(["-o", "yaml", "--limit", "1"]))["pods"]) == 80
