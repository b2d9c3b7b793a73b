"""Colour only where wanted (a terminal, TERM not dumb, NO_COLOR unset, or --color always), in the table's
phase column without moving the columns, and in the error:/warning: prefixes of every subcommand."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.terminal import run_on_terminal
from wasmsched.cli import color
from wasmsched.cli.table import format_table

ESC = re.compile(r"\x1b\[[0-9;]*m")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def auto_mode(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("NO_COLOR", raising=False)
    yield
    color.set_mode("auto")


def test_auto_colours_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    assert color.enabled(Tty())
    assert not color.enabled(io.StringIO())
    monkeypatch.setenv("TERM", "dumb")
    assert not color.enabled(Tty())
    monkeypatch.delenv("TERM")
    assert not color.enabled(Tty())


def test_no_color_disables_it_when_not_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "")
    assert color.enabled(Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not color.enabled(Tty())


def test_the_flag_decides_over_the_terminal_and_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    color.set_mode("always")
    assert color.enabled(io.StringIO())
    color.set_mode("never")
    assert not color.enabled(Tty())
    with pytest.raises(ValueError):
        color.set_mode("sometimes")


def test_error_and_warning_prefixes() -> None:
    out = Tty()
    color.error("bad", out)
    color.warning("careful", out)
    assert out.getvalue() == "\x1b[1;31merror:\x1b[0m bad\n\x1b[1;33mwarning:\x1b[0m careful\n"
    plain = io.StringIO()
    color.error("bad", plain)
    assert plain.getvalue() == "error: bad\n"


def _pod(name: str, phase: str, node: str | None) -> dict[str, Any]:
    return {"namespace": "default", "name": name, "node": node, "phase": phase, "message": "",
            "nominatedNode": None, "attempts": 1}


DOC = {"pods": [_pod("a", "Scheduled", "node-1"), _pod("long-name", "Unschedulable", None),
                _pod("c", "Preempted", None), _pod("d", "Error", None), _pod("e", "Ignored", None)],
       "events": [], "summary": {"scheduled": 1, "unschedulable": 1, "preempted": 1, "error": 1, "ignored": 1,
                                 "running": 0, "seconds": 0.1}}


def test_table_colours_the_phase_and_keeps_the_columns() -> None:
    coloured = format_table(DOC, color=True)
    assert ESC.sub("", coloured) == format_table(DOC, color=False)
    lines = coloured.splitlines()
    assert "\x1b[32mScheduled\x1b[0m" in lines[1]
    assert "\x1b[31mUnschedulable\x1b[0m" in lines[2]
    assert "\x1b[33mPreempted\x1b[0m" in lines[3]
    assert "\x1b[31mError\x1b[0m" in lines[4]
    assert "\x1b[" not in lines[5] and "\x1b[" not in lines[0]  # Ignored, and the header
    # The NODE column starts at the same place on every line once the codes are taken out.
    col = lines[0].index("NODE")
    assert ESC.sub("", lines[1])[col:].startswith("node-1 ")
    assert ESC.sub("", lines[2])[col:].startswith("- ")


def test_simulate_on_a_terminal_is_coloured_unless_told_not_to() -> None:
    cluster = ["simulate", "--generate", "nodes=2,pods=3"]
    code, out = run_on_terminal(cluster)
    assert code == 0 and "\x1b[32mScheduled\x1b[0m" in out
    for argv, env in (([*cluster, "--color", "never"], {}), (["--color", "never", *cluster], {}),
                      (cluster, {"NO_COLOR": "1"}), (cluster, {"TERM": "dumb"})):
        code, out = run_on_terminal(argv, env)
        assert code == 0 and "Scheduled" in out and "\x1b[" not in out, (argv, env)


def test_errors_of_every_subcommand_use_the_coloured_prefix() -> None:
    code, out = run_on_terminal(["simulate", "/nonexistent"])
    assert code == 2 and out.startswith("\x1b[1;31merror:\x1b[0m /nonexistent: no such file"), out
    code, out = run_on_terminal(["dev-cluster", "up", "--nodes", "-1"])
    assert code == 2 and out.startswith("\x1b[1;31merror:\x1b[0m --nodes must be >= 0"), out
