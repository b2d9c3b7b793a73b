"""WASI preview 1 is linked but sandboxed (docs/abi.md §2): argv is `args` verbatim, no environment, no
preopened directories, stdin at EOF, real clocks and randomness."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.wasm.harness import load
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.types import NodeInfo, get_pod_key
from wasmsched.testing.builders import make_node, make_pod

ERRNO_BADF = 8


def probe(tmp_path: Path, **args: Any) -> tuple[Any, Any]:
    plugin = load("wasi/sandbox_probe", tmp_path, **args)
    pod = make_pod("p").obj()
    plugin.pre_filter(CycleState(), pod, [])
    assert plugin.filter(CycleState(), pod, NodeInfo(make_node("n1").obj())) is None
    inst = plugin.pool.instance(plugin.pool.pinned_instance_id(get_pod_key(pod)))  # type: ignore[arg-type]
    assert inst is not None
    return plugin, inst


def argv(inst: Any) -> list[str]:
    argc = inst.get_global("argc")
    mem = inst.read_memory(0, 4096)
    out = []
    for i in range(argc):
        ptr = int.from_bytes(mem[64 + 4 * i:68 + 4 * i], "little")
        out.append(mem[ptr:mem.index(0, ptr)].decode())
    return out


@pytest.mark.parametrize("args", [[], ["--verbose", "", "x=1"]])
def test_argv_is_args_verbatim_without_a_program_name(tmp_path: Path, args: list[str]) -> None:
    _, inst = probe(tmp_path, args=args)
    assert inst.get_global("argc") == len(args)
    assert argv(inst) == args


def test_no_environment_even_when_the_host_has_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WASMSCHED_SECRET", "s3cret")
    assert os.environ
    _, inst = probe(tmp_path)
    assert inst.get_global("envc") == 0


def test_no_preopened_directories(tmp_path: Path) -> None:
    _, inst = probe(tmp_path)
    assert inst.get_global("prestat_errno") == ERRNO_BADF


def test_stdin_is_at_eof(tmp_path: Path) -> None:
    _, inst = probe(tmp_path)
    assert inst.get_global("stdin_errno") == 0
    assert inst.get_global("stdin_read") == 0


def test_real_clock_and_randomness(tmp_path: Path) -> None:
    before = int(time.time())
    _, inst = probe(tmp_path)
    after = int(time.time())
    assert inst.get_global("random_errno") == 0
    assert inst.read_memory(768, 32) != bytes(32)
    assert inst.get_global("clock_errno") == 0
    # The guest's realtime clock is the host's: it read a time between our two readings.
    assert before <= inst.get_global("clock_seconds") <= after
