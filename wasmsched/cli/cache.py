"""`wasmsched cache info|clear`: the on-disk cache of compiled wasm modules (wasm/module_cache.py).

Results go to stdout; errors to stderr.
"""

from __future__ import annotations

import argparse

from wasmsched.cli import color
from wasmsched.wasm.module_cache import CACHE_DIR_ENV, CACHE_MAX_BYTES_ENV, ModuleCache


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (f"The cache of compiled wasm modules: ${CACHE_DIR_ENV} (default ~/.cache/wasmsched/modules), "
                     f"at most ${CACHE_MAX_BYTES_ENV} bytes (default 1Gi; least recently used entries are "
                     "evicted).")
    cmds = p.add_subparsers(dest="cache_command", required=True)
    cmds.add_parser("info", help="print the cache's path, entries, size and cap").set_defaults(func=run_info)
    cmds.add_parser("clear", help="remove every entry").set_defaults(func=run_clear)


def _size(n: int) -> str:
    return f"{n} bytes ({n / (1 << 20):.1f} MiB)"


def run_info(args: argparse.Namespace) -> int:
    cache = ModuleCache()
    entries = cache.entries()
    print(f"path: {cache.directory}")
    print(f"entries: {len(entries)}")
    print(f"size: {_size(sum(e.size for e in entries))}")
    print(f"max size: {_size(cache.max_bytes)}")
    return 0


def run_clear(args: argparse.Namespace) -> int:
    cache = ModuleCache()
    removed = cache.clear()
    for e in removed:
        print(f"removed {e.path} ({e.size} bytes)")
    print(f"removed {len(removed)} entries, {_size(sum(e.size for e in removed))}, from {cache.directory}")
    left = len(cache.entries())
    if left:
        color.error(f"{left} entries could not be removed")
        return 1
    return 0
