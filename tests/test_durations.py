"""tests/durations.py: the files that took longest in earlier runs are run first."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests import durations


def items(*nodeids: str) -> list[pytest.Item]:
    return [cast(pytest.Item, SimpleNamespace(nodeid=n)) for n in nodeids]


def test_files_go_longest_first_and_keep_their_tests_order() -> None:
    got = items("a.py::t1", "a.py::t2", "b.py::t1", "c.py::t1", "c.py::t2", "d.py::t1")
    durations.order(got, {"c.py": 90.0, "a.py": 5.0, "b.py": 30.0})
    assert [i.nodeid for i in got] == ["c.py::t1", "c.py::t2", "b.py::t1", "a.py::t1", "a.py::t2", "d.py::t1"]


def test_without_a_record_the_collection_order_is_kept() -> None:
    got = items("z.py::t", "a.py::t", "m.py::t")
    durations.order(got, {})
    assert [i.nodeid for i in got] == ["z.py::t", "a.py::t", "m.py::t"]


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", '{"a.py": "slow"}'])
def test_an_unreadable_record_orders_nothing(tmp_path: Path, text: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(text)
    assert durations.load(path) == {}
    assert durations.load(tmp_path / "missing.json") == {}


def report(nodeid: str, seconds: float) -> pytest.TestReport:
    return cast(pytest.TestReport, SimpleNamespace(nodeid=nodeid, duration=seconds))


def test_a_run_records_each_files_seconds_over_what_was_recorded(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "d.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"a.py": 1.0, "old.py": 7.0}))
    rec = durations.Recorder(path)
    assert rec.recorded == {"a.py": 1.0, "old.py": 7.0}
    for nodeid, s in [("a.py::t1", 2.0), ("a.py::t1", 0.5), ("a.py::t2", 1.0), ("b.py::t", 4.0)]:
        rec.pytest_runtest_logreport(report(nodeid, s))
    rec.pytest_sessionfinish(cast(pytest.Session, None))
    # The files of this run replace their record; a file that did not run (a -k selection) keeps its own.
    assert json.loads(path.read_text()) == {"a.py": 3.5, "b.py": 4.0, "old.py": 7.0}


def test_workers_order_by_the_controllers_record() -> None:
    rec = durations.Recorder(Path("/nonexistent/d.json"))
    rec.recorded = {"b.py": 3.0}
    node: Any = SimpleNamespace(workerinput={})
    rec.pytest_configure_node(node)
    got = items("a.py::t", "b.py::t")
    durations.WorkerOrder(node.workerinput[durations._INPUT]).pytest_collection_modifyitems(got)
    assert [i.nodeid for i in got] == ["b.py::t", "a.py::t"]
