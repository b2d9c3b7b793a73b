"""util/heap.py: what a backlog freed on many threads goes back to the system (bench/soak_cluster.py saw
`run` keep it), at most once per interval."""

from __future__ import annotations

import ctypes.util
import os
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


# In a child process: N threads each allocate from glibc's malloc (bytearrays over Python's 512-byte
# small-object limit) and wait until all have, so none hands its arena back; then malloc_info counts the
# arenas.
ARENAS = """
import ctypes, os, sys, tempfile, threading
from wasmsched.util.heap import configure_allocator
if sys.argv[1] == "configure":
    print(" ".join(configure_allocator({})))
libc = ctypes.CDLL(None)
libc.fopen.restype, libc.fopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
barrier = threading.Barrier(7)
kept = []
def work():
    kept.append([bytearray(2000) for _ in range(100)])
    barrier.wait()
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads: t.start()
barrier.wait()
path = tempfile.mktemp()
f = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, f)
libc.fclose(f)
print(open(path).read().count("<heap nr="))
os.unlink(path)
barrier.wait()
"""


def _env_without_allocator_settings() -> dict[str, str]:
    # LD_PRELOAD too: a runner on jemalloc would hand it to the children that measure glibc's malloc.
    return {k: v for k, v in os.environ.items()
            if not k.startswith("MALLOC_") and k not in ("GLIBC_TUNABLES", "LD_PRELOAD")}


def _env_on_jemalloc(**extra: str) -> dict[str, str]:
    lib = ctypes.util.find_library("jemalloc")
    assert lib is not None, "libjemalloc2 is installed by set-up (tools/apt-tools.sh)"
    return {**_env_without_allocator_settings(), "LD_PRELOAD": lib, **extra}


def _child(code: str, *argv: str) -> list[str]:
    env = _env_without_allocator_settings()
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True,
                         timeout=120, env=env)
    return out.stdout.splitlines()


def test_threads_share_two_arenas_once_configured() -> None:
    settings, arenas = _child(ARENAS, "configure")
    assert settings == "MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072"
    assert int(arenas) <= 2
    (default,) = _child(ARENAS, "default")
    assert int(default) >= 5  # glibc's own: an arena per thread, up to 8 per core


# In a child process: a 4 MiB block (mmapped) is freed, then 1 MiB is asked for: mmapped too (its bytes show
# in mallinfo2's hblkhd) unless glibc raised its threshold to the freed block's size.
MMAP = """
import ctypes, sys
from wasmsched.util.heap import _MallInfo2, configure_allocator
if sys.argv[1] == "configure":
    configure_allocator({})
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = _MallInfo2
libc.free(libc.malloc(4 << 20))
before = libc.mallinfo2().hblkhd
p = libc.malloc(1 << 20)
print(libc.mallinfo2().hblkhd - before)
"""


def test_large_blocks_stay_mapped_once_configured() -> None:
    (mapped,) = _child(MMAP, "configure")
    assert int(mapped) >= 1 << 20
    (default,) = _child(MMAP, "default")
    assert int(default) == 0  # glibc's own: the threshold rose to 4 MiB, so 1 MiB came from the heap


def test_the_environment_s_settings_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []

    def mallopt(param: int, value: int) -> int:
        calls.append((param, value))
        return 1

    monkeypatch.setattr(heap, "_mallopt", lambda: mallopt)
    assert heap.configure_allocator({"MALLOC_ARENA_MAX": "8"}) == ["MALLOC_MMAP_THRESHOLD_=131072"]
    assert calls == [(heap.M_MMAP_THRESHOLD, 128 * 1024)]
    calls.clear()
    assert heap.configure_allocator({"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=65536"}) == [
        "MALLOC_ARENA_MAX=2"]
    assert calls == [(heap.M_ARENA_MAX, 2)]
    # musl's mallopt refuses every parameter: nothing is reported as set.
    monkeypatch.setattr(heap, "_mallopt", lambda: lambda param, value: 0)
    assert heap.configure_allocator({}) == []


def test_run_configures_the_allocator_first() -> None:
    env = _env_without_allocator_settings()
    # --secure-port out of range: `run` exits 2 before it needs a server.
    out = subprocess.run([sys.executable, "-m", "wasmsched", "-v", "2", "run", "--secure-port", "70000"],
                         capture_output=True, text=True, timeout=120, env=env, check=False)
    assert out.returncode == 2, out.stderr
    assert ('"Memory allocator" allocator="glibc" settings="MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072"'
            in out.stderr)
    out = subprocess.run([sys.executable, "-m", "wasmsched", "-v", "2", "run", "--secure-port", "70000"],
                         capture_output=True, text=True, timeout=120, env={**env, "MALLOC_ARENA_MAX": "4"},
                         check=False)
    assert '"Memory allocator" allocator="glibc" settings="MALLOC_MMAP_THRESHOLD_=131072"' in out.stderr, out.stderr


# In a child process with jemalloc preloaded (as deploy/Containerfile runs `wasmsched`): 100 MB allocated in
# 200 KB blocks, written, freed; jemalloc keeps freed pages dirty for seconds, unless purged.
JEMALLOC = """
import ctypes
from wasmsched.util.heap import allocator, configure_allocator, malloc_in_use, release_free_memory

def rss_mb():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20

libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
start, rss_start = malloc_in_use(), rss_mb()
blocks = [libc.malloc(200_000) for _ in range(500)]
for b in blocks:
    ctypes.memset(b, 1, 200_000)
grown = malloc_in_use() - start
for b in blocks:
    libc.free(b)
held = rss_mb()
purged = release_free_memory()
print(allocator(), repr(" ".join(configure_allocator({}))), grown // 2**20, purged, round(held - rss_start),
      round(rss_mb() - rss_start))
"""


def test_a_preloaded_jemalloc_is_named_measured_and_purged() -> None:
    env = _env_on_jemalloc(MALLOC_CONF="dirty_decay_ms:60000")
    out = subprocess.run([sys.executable, "-c", JEMALLOC], capture_output=True, text=True, check=True,
                         timeout=120, env=env)
    name, settings, grown, purged, held, left = out.stdout.split()
    # No glibc settings for a malloc that is not glibc's; the live bytes are jemalloc's own count.
    assert (name, settings, purged) == ("jemalloc", "''", "True")
    assert 95 <= int(grown) <= 110, out.stdout
    # jemalloc returned part of the 100 MB as it was freed and held the rest for its 60 s decay; the purge
    # returned that.
    assert int(held) > 20 and int(left) < 10, out.stdout


def test_without_a_preload_the_allocator_is_glibc_s() -> None:
    assert heap.allocator() == "glibc"


def test_run_names_a_preloaded_jemalloc_and_sets_nothing_for_glibc() -> None:
    out = subprocess.run([sys.executable, "-m", "wasmsched", "-v", "2", "run", "--secure-port", "70000"],
                         capture_output=True, text=True, timeout=120, check=False, env=_env_on_jemalloc())
    assert out.returncode == 2, out.stderr
    assert '"Memory allocator" allocator="jemalloc" settings=""' in out.stderr, out.stderr
