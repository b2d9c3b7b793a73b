"""The on-disk cache of compiled modules stays within its cap, evicting the least recently used entry
(wasm/module_cache.py); a hit makes an entry the most recently used."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import pytest
import wasmtime

from wasmsched.wasm import module_cache
from wasmsched.wasm.engine import Runtime
from wasmsched.wasm.module_cache import ModuleCache, default_max_bytes, parse_size

# Four guests of one shape, so their compiled sizes are about the same; differing bytes, so four entries.
GUESTS = [bytes(wasmtime.wat2wasm(f'(module (memory (export "memory") 1 1) (func (export "filter") (result i32) '
                                  f"(i32.const {n})))")) for n in range(4)]
LONG_AGO = 1_000_000_000.0  # 2001: older than anything the cache writes itself


def entry_of(cache_dir: Path, wasm: bytes) -> Path:
    [path] = cache_dir.glob(hashlib.sha256(wasm).hexdigest() + "-*.cwasm")
    return path


def cached(cache_dir: Path) -> set[int]:
    """Which of GUESTS have an entry."""
    names = {p.name for p in cache_dir.glob("*.cwasm")}
    return {i for i, w in enumerate(GUESTS) if any(n.startswith(hashlib.sha256(w).hexdigest()) for n in names)}


@pytest.fixture(scope="module")
def cap(tmp_path_factory: pytest.TempPathFactory) -> int:
    """A cap that holds any three of GUESTS' entries but not all four."""
    d = tmp_path_factory.mktemp("sizes")
    rt = Runtime(cache_dir=d, cache_max_bytes=1 << 30)
    for w in GUESTS:
        rt.compile(w)
    sizes = [entry_of(d, w).stat().st_size for w in GUESTS]
    return sum(sizes) - min(sizes) // 2


def store_three(cache_dir: Path, cap: int) -> None:
    """Guests 0, 1, 2 cached, used in that order (long ago)."""
    rt = Runtime(cache_dir=cache_dir, cache_max_bytes=cap)
    for i in range(3):
        rt.compile(GUESTS[i])
        os.utime(entry_of(cache_dir, GUESTS[i]), (LONG_AGO + i, LONG_AGO + i))
    assert cached(cache_dir) == {0, 1, 2}


def test_storing_past_the_cap_evicts_the_least_recently_used_entry(tmp_path: Path, cap: int) -> None:
    store_three(tmp_path, cap)
    rt = Runtime(cache_dir=tmp_path, cache_max_bytes=cap)
    rt.compile(GUESTS[3])
    assert cached(tmp_path) == {1, 2, 3}
    assert rt.disk_cache.total_bytes() <= cap


def test_a_hit_makes_an_entry_the_most_recently_used(tmp_path: Path, cap: int) -> None:
    store_three(tmp_path, cap)
    rt = Runtime(cache_dir=tmp_path, cache_max_bytes=cap)
    rt.compile(GUESTS[0])  # a hit: loaded, not compiled
    assert (rt.compiled, rt.loaded_from_cache) == (0, 1)
    rt.compile(GUESTS[3])
    assert cached(tmp_path) == {0, 2, 3}  # guest 1 was the least recently used


def test_an_evicted_module_is_compiled_again(tmp_path: Path, cap: int) -> None:
    store_three(tmp_path, cap)
    Runtime(cache_dir=tmp_path, cache_max_bytes=cap).compile(GUESTS[3])
    rt = Runtime(cache_dir=tmp_path, cache_max_bytes=cap)
    rt.compile(GUESTS[0])
    assert (rt.compiled, rt.loaded_from_cache) == (1, 0)
    assert cached(tmp_path) == {0, 2, 3}


def test_an_artifact_larger_than_the_cap_is_not_stored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rt = Runtime(cache_dir=tmp_path, cache_max_bytes=100)
    with caplog.at_level(logging.INFO, "wasmsched.wasm"):
        rt.compile(GUESTS[0])
    assert rt.compiled == 1 and not any(tmp_path.glob("*.cwasm"))
    assert "not cached" in caplog.text


def test_eviction_tolerates_entries_removed_by_another_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               cap: int) -> None:
    store_three(tmp_path, cap)
    cache = ModuleCache(tmp_path, cap)
    listed = cache.entries()
    for e in listed:
        e.path.unlink()  # another process cleared the cache after this one listed it
    monkeypatch.setattr(cache, "entries", lambda: listed)
    cache.max_bytes = 0
    assert cache.evict() == []


def test_stale_temporary_files_are_removed_and_fresh_ones_kept(tmp_path: Path) -> None:
    cache = ModuleCache(tmp_path, 1 << 20)
    stale, fresh = tmp_path / ".tmp-dead", tmp_path / ".tmp-writing"
    stale.write_bytes(b"x" * 10)
    fresh.write_bytes(b"y")
    os.utime(stale, (LONG_AGO, LONG_AGO))
    assert [e.path for e in cache.evict()] == [stale]
    assert fresh.exists() and not stale.exists()


def test_clear_removes_every_entry(tmp_path: Path, cap: int) -> None:
    store_three(tmp_path, cap)
    cache = ModuleCache(tmp_path, cap)
    before = cache.entries()
    assert cache.clear() == before
    assert cache.entries() == [] and cache.total_bytes() == 0


def test_the_default_cap_holds_thirty_compiled_go_guests() -> None:
    # A compiled Go guest is about 35 MB: the six examples and a plugin author's own guests must fit.
    assert module_cache.DEFAULT_MAX_BYTES >= 30 * 35_000_000


def test_a_new_build_of_a_guest_replaces_its_older_builds_only(tmp_path: Path, cap: int) -> None:
    """An edit-build-run loop: each build of /src/mine.wasm replaces the last one, so the entries of other
    guests (0 and 1, the least recently used) stay, however many builds there are."""
    rt = Runtime(cache_dir=tmp_path, cache_max_bytes=cap)
    for i in (0, 1):
        rt.compile(GUESTS[i])
        os.utime(entry_of(tmp_path, GUESTS[i]), (LONG_AGO + i, LONG_AGO + i))
    for build in (GUESTS[2], GUESTS[3], GUESTS[2]):
        Runtime(cache_dir=tmp_path, cache_max_bytes=cap).compile(build, "/src/mine.wasm")
    assert cached(tmp_path) == {0, 1, 2}
    assert len(list(tmp_path.glob("*.from-*.cwasm"))) == 1
    again = Runtime(cache_dir=tmp_path, cache_max_bytes=cap)
    again.compile(GUESTS[2], "/elsewhere/same-bytes.wasm")  # found whichever origin stored it
    assert (again.compiled, again.loaded_from_cache) == (0, 1)


def test_compiling_is_logged_with_its_duration_and_cache_entry(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, "wasmsched.wasm"):
        Runtime(cache_dir=tmp_path, cache_max_bytes=1 << 30).compile(GUESTS[0], "/src/g.wasm")
    [entry] = tmp_path.glob("*.cwasm")
    before, after = [r.getMessage() for r in caplog.records if "ompil" in r.getMessage()]
    assert before.startswith('"Compiling wasm guest; the compiled module is cached for later runs" '
                             'guest="/src/g.wasm" bytes=')
    assert after.startswith('"Compiled wasm guest" guest="/src/g.wasm" duration="')
    assert f'cache="{entry}"' in after


def test_a_large_guest_is_announced_at_the_default_verbosity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    from wasmsched.util.klog import V0
    from wasmsched.wasm import engine

    with caplog.at_level(V0, "wasmsched.wasm"):
        Runtime(cache_dir=tmp_path, cache_max_bytes=1 << 30).compile(GUESTS[0])
        assert not caplog.records  # a small guest compiles in milliseconds: only -v 2 tells
        monkeypatch.setattr(engine, "SLOW_COMPILE_BYTES", len(GUESTS[1]))
        Runtime(cache_dir=tmp_path, cache_max_bytes=1 << 30).compile(GUESTS[1])
    assert [r.getMessage().split('"')[1] for r in caplog.records] == [
        "Compiling wasm guest; the compiled module is cached for later runs", "Compiled wasm guest"]


@pytest.mark.parametrize(("text", "want"), [("0", 0), ("1048576", 1 << 20), ("64Ki", 64 << 10), ("256Mi", 256 << 20),
                                            (" 2Gi ", 2 << 30)])
def test_sizes(text: str, want: int) -> None:
    assert parse_size(text) == want


@pytest.mark.parametrize("text", ["", "-1", "1.5Mi", "1MB", "lots"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(ValueError, match="is not a size"):
        parse_size(text)


def test_the_cap_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
                                            tmp_path: Path) -> None:
    monkeypatch.delenv(module_cache.CACHE_MAX_BYTES_ENV, raising=False)
    assert default_max_bytes() == module_cache.DEFAULT_MAX_BYTES == 1 << 30
    monkeypatch.setenv(module_cache.CACHE_MAX_BYTES_ENV, "3Mi")
    assert Runtime(cache_dir=tmp_path).disk_cache.max_bytes == 3 << 20
    monkeypatch.setenv(module_cache.CACHE_MAX_BYTES_ENV, "huge")
    with caplog.at_level(logging.WARNING, "wasmsched.wasm"):
        assert default_max_bytes() == module_cache.DEFAULT_MAX_BYTES
    assert "WASMSCHED_CACHE_MAX_BYTES" in caplog.text
