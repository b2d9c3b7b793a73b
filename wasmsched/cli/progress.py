"""A one-line progress display on a terminal while a simulation runs (`simulate`; any command that
runs a Simulation can use `show_progress`).

The line is rewritten in place with a carriage return, at most UPDATES_PER_SECOND times a second,
starting DELAY_SECONDS after the run started, so that short runs print nothing; it is blanked at
the end, so the results that follow start on a clean line. Log records written meanwhile blank it
first (the next update draws it again), so a warning never ends up glued to it.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from wasmsched.simulator.simulation import Progress, Simulation

DELAY_SECONDS = 1.0
UPDATES_PER_SECOND = 4
# Seconds before the first line, for tests that must see it without a long run; not a user setting.
DELAY_ENV = "WASMSCHED_PROGRESS_DELAY"


def progress_text(label: str, p: Progress) -> str:
    """The elapsed time first, then the counts: a narrow terminal cuts the line's end."""
    rate = p.scheduled / p.seconds if p.seconds > 0 else 0.0
    return (f"{label} {elapsed(p.seconds)}  {p.scheduled}/{p.total} scheduled, {p.pending} pending, "
            f"{p.unschedulable} unschedulable, {rate:.0f} pods/s")


def elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"


class ProgressLine:
    """The line on `stream`; `update` is the Simulation's per-cycle hook, so it returns at once until due."""

    def __init__(self, stream: TextIO, label: str, delay: float = DELAY_SECONDS) -> None:
        self._stream = stream
        self._label = label
        self._due = time.monotonic() + delay
        self._shown = 0  # characters of the line on screen

    def update(self, sim: Simulation) -> None:
        now = time.monotonic()
        if now < self._due:
            return
        self._due = now + 1 / UPDATES_PER_SECOND
        # One character short of the width: a full line makes some terminals wrap, and \r then
        # returns to the wrapped part only.
        width = _columns(self._stream) - 1
        text = progress_text(self._label, sim.progress())[:max(width, 1)]
        pad = " " * max(self._shown - len(text), 0)
        self._stream.write(f"\r{text}{pad}")
        self._stream.flush()
        self._shown = len(text)

    def clear(self) -> None:
        """Blanks the line (spaces, not an escape sequence: a dumb terminal understands them too)."""
        if self._shown:
            self._stream.write("\r" + " " * self._shown + "\r")
            self._stream.flush()
            self._shown = 0


class _ClearBeforeLogging(logging.Filter):
    def __init__(self, line: ProgressLine) -> None:
        super().__init__()
        self._line = line

    def filter(self, record: logging.LogRecord) -> bool:
        self._line.clear()
        return True


def wanted(stream: TextIO, *, quiet: bool = False) -> bool:
    """Progress only for a person watching: on a terminal, unless --quiet."""
    return not quiet and stream.isatty()


@contextmanager
def show_progress(sim: Simulation, label: str, stream: TextIO, *, enabled: bool = True) -> Iterator[None]:
    """Displays `sim`'s progress on `stream` while the body runs the simulation; nothing when not enabled."""
    if not enabled:
        yield
        return
    line = ProgressLine(stream, label, _delay())
    handlers = logging.getLogger("wasmsched").handlers
    guard = _ClearBeforeLogging(line)
    for h in handlers:
        h.addFilter(guard)
    sim.on_cycle = line.update
    try:
        yield
    finally:
        sim.on_cycle = None
        for h in handlers:
            h.removeFilter(guard)
        line.clear()


def _columns(stream: TextIO) -> int:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError):
        columns = 0
    # A terminal whose size was never set (a fresh pseudo-terminal) says 0: COLUMNS, else 80.
    return columns if columns > 0 else shutil.get_terminal_size().columns


def _delay() -> float:
    try:
        return float(os.environ.get(DELAY_ENV, DELAY_SECONDS))
    except ValueError:
        return DELAY_SECONDS
