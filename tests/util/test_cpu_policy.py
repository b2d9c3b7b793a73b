"""util/cpu_policy.py: `run`'s threads under SCHED_BATCH, those started before and after alike."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHILD = """
import os, threading
from wasmsched.util.cpu_policy import use_batch_policy

def policy(tid):
    return os.sched_getscheduler(tid)

seen = {}
started = threading.Event()
go = threading.Event()

def early():
    started.set()
    go.wait()
    seen["early"] = policy(threading.get_native_id())

t = threading.Thread(target=early)
t.start()
started.wait()
print(use_batch_policy())
late = threading.Thread(target=lambda: seen.__setitem__("late", policy(threading.get_native_id())))
late.start()
late.join()
go.set()
t.join()
print(policy(0) == os.SCHED_BATCH, seen["early"] == os.SCHED_BATCH, seen["late"] == os.SCHED_BATCH)
"""


def _run(preexec=None) -> list[str]:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=True,
                         preexec_fn=preexec)
    return out.stdout.splitlines()


def _other() -> None:
    # Whatever policy the test process has (a test may have run `run` in it), the child starts from the default.
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def test_every_thread_moves_to_sched_batch() -> None:
    assert _run(_other) == ["SCHED_BATCH", "True True True"]


def test_a_process_started_under_sched_batch_stays_so() -> None:
    assert _run(lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))) == [
        "SCHED_BATCH", "True True True"]


def test_a_policy_chosen_by_whoever_started_the_process_is_kept() -> None:
    lines = _run(lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)))
    assert lines == ["unchanged (SCHED_IDLE was set by whoever started the process)", "False False False"]


def test_a_refusal_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    from wasmsched.util import cpu_policy

    def refuse(tid: int, policy: int, param: os.sched_param) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(cpu_policy.os, "sched_getscheduler", lambda pid: os.SCHED_OTHER)
    monkeypatch.setattr(cpu_policy.os, "sched_setscheduler", refuse)
    assert cpu_policy.use_batch_policy() == "unchanged (Operation not permitted)"


def test_run_sets_the_policy_before_its_threads_start() -> None:
    # --secure-port out of range: `run` exits 2 before it needs a server.
    out = subprocess.run([sys.executable, "-m", "wasmsched", "-v", "2", "run", "--secure-port", "70000"],
                         capture_output=True, text=True, timeout=120, check=False, preexec_fn=_other)
    assert out.returncode == 2, out.stderr
    assert '"CPU scheduling policy" policy="SCHED_BATCH"' in out.stderr, out.stderr
