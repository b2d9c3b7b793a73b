"""Ported from kube-scheduler's framework/cycle_state_test.go."""

from __future__ import annotations

import pytest

from wasmsched.framework.cycle_state import CycleState, NotFoundError


class FakeData:
    def __init__(self, data: str) -> None:
        self.data = data

    def clone(self) -> FakeData:
        return FakeData(self.data)


class NoClone:
    def __init__(self, data: str) -> None:
        self.data = data


def test_read_write_delete() -> None:
    s = CycleState()
    with pytest.raises(NotFoundError):
        s.read("key")
    assert s.get("key") is None and s.get("key", 1) == 1
    d = FakeData("v")
    s.write("key", d)
    assert s.read("key") is d
    s.write("key", FakeData("w"))
    assert s.read("key").data == "w"
    s.delete("key")
    with pytest.raises(NotFoundError):
        s.read("key")
    s.delete("key")  # deleting a missing key is fine


@pytest.mark.parametrize(("name", "entries"), [
    # TestCycleStateClone
    ("empty", {}),
    ("one value", {"key": "v1"}),
    ("two values", {"key1": "v1", "key2": "v2"}),
])
def test_clone(name: str, entries: dict[str, str]) -> None:
    s = CycleState()
    for k, v in entries.items():
        s.write(k, FakeData(v))
    s.skip_filter_plugins = {"F"}
    s.skip_score_plugins = {"S"}
    s.skip_pre_bind_plugins = {"P"}
    c = s.clone()
    for k, v in entries.items():
        got = c.read(k)
        assert got.data == v
        assert got is not s.read(k)  # values are cloned, not shared
    assert (c.skip_filter_plugins, c.skip_score_plugins, c.skip_pre_bind_plugins) == ({"F"}, {"S"}, {"P"})
    # Changing the clone leaves the original alone.
    c.write("new", FakeData("x"))
    c.skip_filter_plugins.add("G")
    c.skip_score_plugins.add("T")
    assert s.get("new") is None
    assert s.skip_filter_plugins == {"F"} and s.skip_score_plugins == {"S"}
    for k, v in entries.items():
        c.read(k).data = "changed"
        assert s.read(k).data == v


def test_clone_keeps_values_without_clone() -> None:
    s = CycleState()
    v = NoClone("x")
    s.write("k", v)
    assert s.clone().read("k") is v


def test_new_state_is_empty() -> None:
    s = CycleState()
    assert s.skip_filter_plugins == set() and s.skip_score_plugins == set() and s.skip_pre_bind_plugins == set()
    # Each state has its own sets.
    t = CycleState()
    s.skip_filter_plugins.add("A")
    assert t.skip_filter_plugins == set()
