"""util/heap.py: what a backlog freed on many threads goes back to the system (bench/soak_cluster.py saw
`run` keep it), at most once per interval."""

from __future__ import annotations

import subprocess
import sys

import pytest

from wasmsched.util import heap

# In a child process (its own heap): 4 threads each allocate 25,000 blocks of 1.5 KB (glibc's malloc, not
# Python's small-object allocator) and keep one in 50: ~150 MB freed, scattered through the arenas, so
# glibc cannot give it back from a heap's top by itself.
CHILD = """
import threading
from wasmsched.util.heap import release_free_memory

def rss_mb():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20

kept = []
def work():
    blocks = [bytearray(1500) for _ in range(25000)]
    kept.append(blocks[::50])
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
before = rss_mb()
called = release_free_memory()
print(before, rss_mb(), called)
"""


def test_the_free_pages_of_every_arena_go_back() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=120)
    before, after, called = out.stdout.split()
    assert called == "True"
    assert float(before) - float(after) > 80, out.stdout  # of the ~150 MB freed


def test_the_scavenger_runs_once_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    runs: list[float] = []

    def release() -> bool:
        runs.append(now[0])
        return True

    monkeypatch.setattr(heap, "release_free_memory", release)
    s = heap.Scavenger(10.0, clock=lambda: now[0])
    for t in range(35):
        now[0] = float(t)
        s.poll()
    assert runs == [10.0, 20.0, 30.0] and s.runs == 3
