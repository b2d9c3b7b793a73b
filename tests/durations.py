"""Longest test files first, so that pytest-xdist's two workers finish together.

`make test` distributes whole files (--dist loadfile). A file that takes minutes (the image build, the fault
scenarios) started last would run alone at the end while the other worker idles. So the files are ordered by
how long they took in the previous runs, longest first (longest-processing-time scheduling; unknown files
last, in their usual order), and each run records what its files took. The record lives outside the
checkout (`~/.cache/wasmsched/test-durations.json`, `$WASMSCHED_TEST_DURATIONS`), so clean clones share it.

xdist checks that every worker collected the same tests in the same order: the controller reads the record
once and hands it to the workers (workerinput), and only the controller writes it, when the run ends.
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from wasmsched.util.files import cache_dir, write_atomic

_ENV = "WASMSCHED_TEST_DURATIONS"
_INPUT = "wasmsched_file_durations"
_TMP_PREFIX = ".tmp-test-durations-"


def load(path: Path) -> dict[str, float]:
    """The recorded seconds per test file; empty when there is no record or it cannot be read."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(k, str) and isinstance(v, (int, float))}


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def order(items: list[pytest.Item], seconds: dict[str, float]) -> None:
    """Sorts items in place: files by recorded seconds, longest first; within a file the order is kept."""
    first_seen: dict[str, int] = {}
    for i, item in enumerate(items):
        first_seen.setdefault(_file(item.nodeid), i)

    def key(item: pytest.Item) -> tuple[float, int]:
        path = _file(item.nodeid)
        return (-seconds.get(path, 0.0), first_seen[path])

    items.sort(key=key)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


class Recorder:
    """On the controller: the record read at the start, and each file's seconds in this run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.recorded = load(path)
        self.ran: defaultdict[str, float] = defaultdict(float)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_INPUT] = self.recorded

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        order(items, self.recorded)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.ran[_file(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.ran:
            return
        merged = {**load(self.path), **{k: round(v, 2) for k, v in self.ran.items()}}
        # Another run writing meanwhile, or a read-only cache: only the next run's order is affected.
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, json.dumps(merged, indent=0, sort_keys=True).encode(), _TMP_PREFIX)


class WorkerOrder:
    """On an xdist worker: the controller's record orders the collection."""

    def __init__(self, seconds: dict[str, float]) -> None:
        self.seconds = seconds

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        order(items, self.seconds)


def pytest_configure(config: pytest.Config) -> None:
    if _is_worker(config):
        seconds = config.workerinput.get(_INPUT, {})  # type: ignore[attr-defined]
        config.pluginmanager.register(WorkerOrder(seconds), "wasmsched-test-durations")
    else:
        config.pluginmanager.register(Recorder(cache_dir(_ENV, "test-durations.json")), "wasmsched-test-durations")
