"""Suite-wide set-up: compiled wasm modules are cached in a per-run directory, not the user's cache."""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterator

import pytest

os.environ.setdefault("WASMSCHED_CACHE_DIR", tempfile.mkdtemp(prefix="wasmsched-test-cache-"))


@pytest.fixture(autouse=True)
def _restore_wasmsched_logger() -> Iterator[None]:
    """`wasmsched` CLI runs install their own handler and stop propagation; undo that after each test
    so later tests' caplog still sees records."""
    root = logging.getLogger("wasmsched")
    guest = logging.getLogger("wasmsched.wasm.guest")  # its level is set too (wasmsched/cli/logs.py)
    saved = (list(root.handlers), root.level, root.propagate, guest.level)
    yield
    root.handlers[:], root.level, root.propagate = saved[0], saved[1], saved[2]
    guest.setLevel(saved[3])
