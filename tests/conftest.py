"""Suite-wide set-up: compiled wasm modules are cached in a per-run directory, not the user's cache."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("WASMSCHED_CACHE_DIR", tempfile.mkdtemp(prefix="wasmsched-test-cache-"))
