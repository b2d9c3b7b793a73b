"""Cache files: the directory a cache lives in, and writing a file so that a reader (another process sharing
a cache directory) never sees half of it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def cache_dir(env: str, name: str) -> Path:
    """`$env` when set, else `wasmsched/<name>` under `$XDG_CACHE_HOME` (default ~/.cache)."""
    override = os.environ.get(env)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "wasmsched" / name


def write_atomic(path: Path, data: bytes | bytearray, tmp_prefix: str) -> None:
    """Writes `data` to a temporary file beside `path` (named with `tmp_prefix`, so a cache can recognise and
    clean up what a crashed writer left) and renames it into place. Raises OSError; leaves no temporary file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=tmp_prefix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
