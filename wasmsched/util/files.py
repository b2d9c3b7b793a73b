"""Writing a file so that a reader (another process sharing a cache directory) never sees half of it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


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
