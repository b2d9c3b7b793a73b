"""Where guest klog lines go: the sink the application registers at start-up (the CLI: cli/logs.py).

With a sink, every guest line passing its plugin's logSeverity goes to it, formatted by util/klog.py:
natively when the sink has a file descriptor (the native host writes a guest call's lines in one
write), else through the sink's handle(). Without one (an embedder, the tests), guest lines are records
of the `wasmsched.wasm.guest` logger, for whatever handlers the application configured.

Light on purpose: the CLI registers its sink before it knows whether any guest will run, and must not
load the wasm host to do so (tests/cli/test_startup_imports.py). The native host follows the sink
through watch().
"""

from __future__ import annotations

from collections.abc import Callable

from wasmsched.util.klog import KlogHandler

LOGGER = "wasmsched.wasm.guest"

_sink: KlogHandler | None = None
_watchers: list[Callable[[KlogHandler | None], None]] = []


def set_sink(sink: KlogHandler | None) -> None:
    """Guest lines go to `sink` from now on (None: through the guest logger)."""
    global _sink  # noqa: PLW0603 - one sink per process, as there is one stderr
    _sink = sink
    for watcher in _watchers:
        watcher(sink)


def sink() -> KlogHandler | None:
    return _sink


def watch(fn: Callable[[KlogHandler | None], None]) -> None:
    """Calls fn with the sink now and whenever it changes."""
    _watchers.append(fn)
    fn(_sink)
