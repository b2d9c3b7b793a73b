"""`run`'s threads under Linux's SCHED_BATCH policy, so that waking one of its own threads does not preempt
the thread that woke it.

`run` hands every pod from thread to thread: the scheduling loop to a binding cycle, the binding cycle to
the API dispatcher and the transport, the transport back, the binding cycle to the event writers. Under
SCHED_OTHER the kernel lets a woken thread preempt its waker. Here the waker still holds the GIL (it is
inside `Condition.notify` or `Event.set`), so the woken thread runs only to block on the GIL, and the
waker waits to be scheduled again: two context switches for nothing, at every hand-off. sched(7) describes
SCHED_BATCH for this kind of workload: it is SCHED_OTHER (same nice value, same share of the CPU) except
that its threads do not preempt others on wake-up.

Measured (bench/real_cluster.py, backlog of 2,000 pods on 500 nodes): the process's CPU per bound pod fell
10-20 % without a guest and 16-21 % with the NodeNumber guest, at the same binds/s (bench/RESULTS.md).

A process started under another policy (`chrt --idle`, a real-time one) keeps it: that is the user's choice.
"""

from __future__ import annotations

import os
from pathlib import Path

_TASKS = Path("/proc/self/task")
_POLICY_NAMES = {getattr(os, name): name for name in ("SCHED_IDLE", "SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE")
                 if hasattr(os, name)}


def use_batch_policy() -> str:
    """Moves the process's threads from SCHED_OTHER to SCHED_BATCH; threads started later inherit it from the
    thread that starts them. Returns what was done, for the log: "SCHED_BATCH", the policy left in place, or
    why nothing could be done (no such policy here, or refused)."""
    batch = getattr(os, "SCHED_BATCH", None)
    if batch is None or not hasattr(os, "sched_setscheduler"):
        return "unchanged (no SCHED_BATCH on this system)"
    current = os.sched_getscheduler(0)
    if current == batch:
        return "SCHED_BATCH"  # inherited: every thread has it, as every later one will
    if current != os.SCHED_OTHER:
        return f"unchanged ({_POLICY_NAMES.get(current, str(current))} was set by whoever started the process)"
    try:
        tids = [int(t.name) for t in _TASKS.iterdir()]
    except OSError:
        tids = [0]
    moved, error = 0, ""
    for tid in tids:
        try:
            os.sched_setscheduler(tid, batch, os.sched_param(0))
            moved += 1
        except ProcessLookupError:  # a thread that ended meanwhile
            continue
        except OSError as e:  # refused (a seccomp profile, an LSM)
            error = error or (e.strerror or str(e))
    if not error:
        return "SCHED_BATCH"
    return f"unchanged ({error})" if moved == 0 else f"SCHED_BATCH on {moved} of {len(tids)} threads ({error})"


__all__ = ["use_batch_policy"]
