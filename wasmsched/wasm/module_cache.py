"""The on-disk cache of compiled modules (wasmtime's serialized artifacts, `*.cwasm`), bounded in size.

One file an entry, named by the guest's content hash and wasmtime's version (wasm/engine.py), in
`$WASMSCHED_CACHE_DIR` (default `$XDG_CACHE_HOME/wasmsched/modules`, i.e. `~/.cache/wasmsched/modules`).
The entries together stay within `$WASMSCHED_CACHE_MAX_BYTES` (default 1Gi; a number of bytes,
optionally with a Ki, Mi or Gi suffix): after each store the least recently used entries are removed
until they fit. An entry is used when stored and on every hit, which sets its modification time
(a file's access time is unreliable: noatime and relatime mounts do not keep it).

Sizes: a compiled Go guest is about 35 MB (twice its .wasm), so the six examples alone take 220 MB; 1Gi
holds about thirty. A plugin author's edit-build-run loop stores a new entry for every build of the same
guestURL: an entry stored for a guest's origin (its absolute path, or its URL) carries a hash of that
origin in its name (`<key>.from-<hash>.cwasm`), and storing one removes the older builds of the same
origin first, so rebuilding one guest never evicts other guests' entries.

Why not wasmtime's own cache (`Config.cache`): it is configured through a TOML file, compiles and
stores from inside `Module(...)` so hits and misses cannot be counted, and trims the directory in a
background worker on its own schedule (soft limits checked at most every cleanup interval), so
neither `wasmsched cache info` nor a test can tell what is in it or rely on a cap holding after a
store. Here the cap is enforced synchronously by the process that stored, with plain file operations.

Several processes may share the directory: entries are written to a temporary file and renamed into
place (a reader never sees half a file), an entry another process removed meanwhile is simply gone
(a miss costs a compile), and removing a file a process has open or mapped is safe on POSIX.
Temporary files that a crashed writer left behind are removed once they are an hour old.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from wasmsched.util.files import cache_dir, write_atomic

log = logging.getLogger("wasmsched.wasm")

CACHE_DIR_ENV = "WASMSCHED_CACHE_DIR"
CACHE_MAX_BYTES_ENV = "WASMSCHED_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 1 << 30
ENTRY_SUFFIX = ".cwasm"
# `<key>.from-<ORIGIN_ID_CHARS hex of the origin's SHA-256>.cwasm`: an entry of a guest read from that origin.
ORIGIN_MARK = ".from-"
ORIGIN_ID_CHARS = 16
TMP_PREFIX = ".tmp-"
# A writer takes milliseconds; a temporary file this old belongs to a writer that died.
STALE_TMP_SECONDS = 3600.0

_SIZE_RE = re.compile(r"^\s*(\d+)\s*(Ki|Mi|Gi)?\s*$")
_UNITS = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}


def default_cache_dir() -> Path:
    return cache_dir(CACHE_DIR_ENV, "modules")


def parse_size(text: str) -> int:
    """`1048576`, `1024Ki`, `256Mi`, `1Gi` -> bytes; ValueError otherwise."""
    m = _SIZE_RE.match(text)
    if m is None:
        raise ValueError(f"{text!r} is not a size (bytes, or a number with Ki, Mi or Gi)")
    return int(m.group(1)) * _UNITS[m.group(2)]


def default_max_bytes() -> int:
    env = os.environ.get(CACHE_MAX_BYTES_ENV)
    if not env:
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(env)
    except ValueError as e:
        log.warning('"Ignoring %s" err="%s" default=%d', CACHE_MAX_BYTES_ENV, e, DEFAULT_MAX_BYTES)
        return DEFAULT_MAX_BYTES


@dataclass(frozen=True)
class Entry:
    path: Path
    size: int
    last_used: float  # the file's modification time: set when stored, refreshed on each hit


class ModuleCache:
    """Compiled modules on disk under `directory`, at most `max_bytes` in all."""

    def __init__(self, directory: Path | None = None, max_bytes: int | None = None) -> None:
        self.directory = directory if directory is not None else default_cache_dir()
        self.max_bytes = max_bytes if max_bytes is not None else default_max_bytes()

    def path(self, key: str, origin: str | None = None) -> Path:
        """Where the entry of `key` is stored; `origin` (where the guest was read) names it too."""
        if origin is None:
            return self.directory / f"{key}{ENTRY_SUFFIX}"
        return self.directory / f"{key}{_origin_part(origin)}{ENTRY_SUFFIX}"

    def find(self, key: str) -> Path | None:
        """The stored entry of `key`, whichever origin stored it; None on a miss."""
        plain = self.path(key)
        if plain.is_file():
            return plain
        prefix = f"{key}{ORIGIN_MARK}"
        try:
            names = os.listdir(self.directory)
        except OSError:
            return None
        for name in sorted(names):
            if name.startswith(prefix) and name.endswith(ENTRY_SUFFIX):
                return self.directory / name
        return None

    def used(self, path: Path) -> None:
        """A hit: the entry becomes the most recently used."""
        # Gone meanwhile, or a read-only cache: only its recency is lost.
        with contextlib.suppress(OSError):
            os.utime(path)

    def store(self, key: str, data: bytes | bytearray, origin: str | None = None) -> Path | None:
        """Writes the entry atomically, removes older builds of the same origin, then evicts least recently
        used entries beyond the cap. Returns the entry's path; None when it was not stored."""
        path = self.path(key, origin)
        if len(data) > self.max_bytes:
            log.info('"Compiled module larger than the cache; not cached" path="%s" bytes=%d max_bytes=%d',
                     path, len(data), self.max_bytes)
            return None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data, TMP_PREFIX)
        except OSError as e:
            # A read-only or full cache only costs a recompile next time.
            log.warning('"Cannot cache compiled module" path="%s" err="%s"', path, e)
            return None
        if origin is not None:
            self._remove_older_builds(path, origin)
        self.evict()
        return path

    def _remove_older_builds(self, path: Path, origin: str) -> None:
        """An edit-build-run loop's earlier builds are never loaded again: they go before any other entry."""
        part = f"{_origin_part(origin)}{ENTRY_SUFFIX}"
        removed = []
        for e in self.entries():
            if e.path.name.endswith(part) and e.path != path:
                try:
                    if _remove(e.path):
                        removed.append(e)
                except OSError as err:
                    log.warning('"Cannot evict compiled module" path="%s" err="%s"', e.path, err)
        if removed:
            log.info('"Evicted older builds of the guest from the cache" origin="%s" entries=%d bytes=%d',
                     origin, len(removed), sum(e.size for e in removed))

    def entries(self) -> list[Entry]:
        """The entries, least recently used first."""
        out = []
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        for name in names:
            if not name.endswith(ENTRY_SUFFIX):
                continue
            path = self.directory / name
            try:
                st = path.stat()
            except OSError:
                continue  # removed by another process meanwhile
            out.append(Entry(path, st.st_size, st.st_mtime))
        out.sort(key=lambda e: (e.last_used, e.path.name))
        return out

    def total_bytes(self) -> int:
        return sum(e.size for e in self.entries())

    def evict(self) -> list[Entry]:
        """Removes least recently used entries until the rest fit max_bytes; returns what it removed."""
        entries = self.entries()
        total = sum(e.size for e in entries)
        removed = []
        for e in entries:
            if total <= self.max_bytes:
                break
            try:
                if _remove(e.path):
                    removed.append(e)
            except OSError as err:
                log.warning('"Cannot evict compiled module" path="%s" err="%s"', e.path, err)
                continue
            total -= e.size  # removed here or by another process: gone either way
        if removed:
            log.info('"Evicted compiled modules from the cache" dir="%s" entries=%d bytes=%d max_bytes=%d',
                     self.directory, len(removed), sum(e.size for e in removed), self.max_bytes)
        return removed + self._remove_stale_tmp()

    def clear(self) -> list[Entry]:
        """Removes every entry (and stale temporary files); returns what it removed. An entry that
        cannot be removed is logged and stays."""
        removed = []
        for e in self.entries():
            try:
                if _remove(e.path):
                    removed.append(e)
            except OSError as err:
                log.warning('"Cannot remove compiled module" path="%s" err="%s"', e.path, err)
        return removed + self._remove_stale_tmp()

    def _remove_stale_tmp(self) -> list[Entry]:
        removed = []
        try:
            names = [n for n in os.listdir(self.directory) if n.startswith(TMP_PREFIX)]
        except OSError:
            return []
        cutoff = time.time() - STALE_TMP_SECONDS
        for name in names:
            path = self.directory / name
            try:
                st = path.stat()
            except OSError:
                continue
            try:
                if st.st_mtime < cutoff and _remove(path):
                    removed.append(Entry(path, st.st_size, st.st_mtime))
            except OSError as err:
                log.warning('"Cannot remove stale temporary file" path="%s" err="%s"', path, err)
        return removed


def _origin_part(origin: str) -> str:
    return ORIGIN_MARK + hashlib.sha256(origin.encode()).hexdigest()[:ORIGIN_ID_CHARS]


def _remove(path: Path) -> bool:
    """True if this call removed the file; False if it was already gone. Other errors raise OSError."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True
