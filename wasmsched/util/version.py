"""Installed package versions, for `--version` and the API client's User-Agent."""

from __future__ import annotations

import importlib.metadata


def dist_version(dist: str) -> str:
    """The installed distribution's version, "unknown" when it is not installed (a bare source tree)."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
