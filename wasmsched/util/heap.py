"""Keeping `run`'s C heap from growing with time: glibc's malloc set up for a long-running, many-threaded
process (configure_allocator), and the heap's free pages given back to the system, as Go's scavenger does
for kube-scheduler (Scavenger).

glibc's malloc keeps what a long-running process freed in its arenas (one per thread that allocated, up to
8 per core unless configured) and returns it only from the top of each heap. In `run`, a backlog allocates on
many threads (informers, binding cycles, event writers); when its pods are deleted their memory is free but
stays resident: bench/soak_cluster.py saw the process grow ~1 MiB per wave of 5,000 pods while the
heap's live bytes stayed flat. malloc_trim(0) returns the free pages of every arena (madvise), where
there is a glibc; elsewhere (musl) there is nothing to call and nothing is done.

A process may run on jemalloc instead (LD_PRELOAD): then glibc's malloc is not the one in use, so nothing is
set up for it, the live bytes are jemalloc's stats.allocated and the scavenger purges jemalloc's arenas.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import time
from collections.abc import Callable, Mapping
from typing import Any


@functools.cache
def _libc(symbol: str) -> Any | None:
    """The C library's function `symbol`, or None where there is none (not glibc, or too old a glibc)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return getattr(ctypes.CDLL(name), symbol)
    except (OSError, AttributeError):
        return None


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    fn = _libc("malloc_trim")
    if fn is not None:
        fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
    return fn  # type: ignore[no-any-return]


class _MallInfo2(ctypes.Structure):
    # glibc's struct mallinfo2 (malloc.h, glibc 2.33+): every field a size_t.
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


@functools.cache
def _mallinfo2() -> Callable[[], _MallInfo2] | None:
    fn = _libc("mallinfo2")
    if fn is not None:
        fn.argtypes, fn.restype = [], _MallInfo2
    return fn  # type: ignore[no-any-return]


@functools.cache
def _mallctl() -> Any | None:
    """jemalloc's mallctl when the process's malloc is jemalloc's (preloaded, as deploy/Containerfile does, or
    linked in), else None. Looked up in the process's global namespace, where a preloaded library's symbols
    come first, rather than in libc."""
    try:
        fn = ctypes.CDLL(None).mallctl
    except AttributeError:
        return None
    fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p,
                   ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


# jemalloc's MALLCTL_ARENAS_ALL: "arena.<i>.purge" with this index purges every arena.
_JEMALLOC_ARENAS_ALL = 4096


def allocator() -> str:
    """The C heap's allocator: "jemalloc", "glibc" or "other" (musl's, say)."""
    if _mallctl() is not None:
        return "jemalloc"
    return "glibc" if _mallinfo2() is not None else "other"


def _jemalloc_allocated(mallctl: Any) -> int | None:
    # jemalloc's statistics are a snapshot, refreshed by writing "epoch".
    epoch = ctypes.c_uint64(1)
    size = ctypes.c_size_t(ctypes.sizeof(epoch))
    if mallctl(b"epoch", ctypes.byref(epoch), ctypes.byref(size), ctypes.byref(epoch), size) != 0:
        return None
    allocated = ctypes.c_size_t(0)
    size = ctypes.c_size_t(ctypes.sizeof(allocated))
    if mallctl(b"stats.allocated", ctypes.byref(allocated), ctypes.byref(size), None, 0) != 0:
        return None  # a jemalloc built without statistics
    return int(allocated.value)


def malloc_in_use() -> int | None:
    """Bytes the C heap has handed out and not had back, like Go's heap_alloc: glibc's every arena's allocated
    chunks and the mmapped ones (mallinfo2's uordblks + hblkhd), jemalloc's stats.allocated; None for another
    allocator. Unlike RSS it does not move with what the allocator keeps free, so a leak shows in it wave after
    wave."""
    mallctl = _mallctl()
    if mallctl is not None:
        return _jemalloc_allocated(mallctl)
    info = _mallinfo2()
    if info is None:
        return None
    m = info()
    return int(m.uordblks + m.hblkhd)


def release_free_memory() -> bool:
    """Returns the C heap's free pages to the system (glibc's malloc_trim, jemalloc's purge of every arena);
    whether there was an allocator to ask."""
    mallctl = _mallctl()
    if mallctl is not None:
        return mallctl(f"arena.{_JEMALLOC_ARENAS_ALL}.purge".encode(), None, None, None, 0) == 0
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


# mallopt's parameters (malloc.h).
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

# What `run` asks of glibc's malloc (configure_allocator), and the environment variable a user sets instead.
ALLOCATOR_SETTINGS = ((M_ARENA_MAX, 2, "MALLOC_ARENA_MAX", "glibc.malloc.arena_max"),
                      (M_MMAP_THRESHOLD, 128 * 1024, "MALLOC_MMAP_THRESHOLD_", "glibc.malloc.mmap_threshold"))


@functools.cache
def _mallopt() -> Callable[[int, int], int] | None:
    fn = _libc("mallopt")
    if fn is not None:
        fn.argtypes, fn.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return fn  # type: ignore[no-any-return]


def configure_allocator(environ: Mapping[str, str] = os.environ) -> list[str]:
    """Sets glibc's malloc up for a long-running process with many threads (`run`, before its threads start);
    returns what took, as NAME=VALUE (nothing when the process's malloc is another, such as a preloaded
    jemalloc). A setting the environment already makes (MALLOC_ARENA_MAX,
    GLIBC_TUNABLES, ...) is the user's and is left as it is; a C library without these parameters (musl's
    mallopt refuses every one) keeps its own.

    - 2 arenas instead of up to 8 per core. Each thread that allocates gets its own arena up to that limit,
      and each arena keeps its own free chunks: bench/soak_cluster.py's `run` had 16 arenas, and its RSS rose
      for an hour as each one's free memory settled, while the live heap stayed flat. Python allocates with
      the GIL held, so the arenas' locks are rarely contended.
    - A fixed mmap threshold (128 KiB, glibc's initial one). glibc raises the threshold to the size of every
      mmapped block freed (up to 32 MiB): after one large watch or list body, later large buffers are
      carved from the arenas, where they fragment the heap, instead of being mapped and unmapped whole.

    Together, in the paced soak (bench/RESULTS.md): RSS 3 MiB lower and its slope 82 -> 34 KiB per 1,000 pods,
    at the same binds/s and CPU per pod in a backlog.
    """
    fn = _mallopt()
    if fn is None or allocator() != "glibc":
        return []  # jemalloc preloaded: glibc's malloc is not the one in use, and MALLOC_CONF is jemalloc's
    tunables = environ.get("GLIBC_TUNABLES", "")
    done = []
    for param, value, env, tunable in ALLOCATOR_SETTINGS:
        if env in environ or tunable in tunables:
            continue
        if fn(param, value) == 1:
            done.append(f"{env}={value}")
    return done


class Scavenger:
    """Calls release_free_memory at most every `interval` seconds, from whichever thread polls it (`run`'s
    main thread, which wakes every half second anyway)."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._next = clock() + interval
        self.runs = 0

    def poll(self) -> None:
        now = self._clock()
        if now < self._next:
            return
        self._next = now + self.interval
        if release_free_memory():
            self.runs += 1
