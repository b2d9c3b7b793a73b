"""Helpers of the tests against a real control plane."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from typing import Any, TypeVar

from kubernetes.client import ApiClient

T = TypeVar("T")

# Generous: the machine is shared; a condition that holds returns at once, only a failure waits this long.
WAIT_SECONDS = 60.0


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = WAIT_SECONDS) -> T:
    """Polls probe() until it returns something other than None or False; fails naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def plain(obj: object) -> Any:
    """An official-client model as its JSON form (camelCase keys, as kube writes it): its typed attributes
    are all Optional, and a test reads fields it knows are set."""
    return _SERIALIZER.sanitize_for_serialization(obj)


_SERIALIZER = ApiClient()


def namespace_name(test_name: str) -> str:
    """A DNS label from the test's name plus a random suffix (a rerun never meets a leftover)."""
    base = re.sub(r"[^a-z0-9-]+", "-", test_name.lower()).strip("-")[:50].strip("-")
    return f"{base}-{secrets.token_hex(3)}"
