"""The CLI's logs: klog-style structured lines on stderr (util/klog.py), wasm guests' lines included."""

from __future__ import annotations

import logging
import sys

from wasmsched.util.klog import V0, KlogHandler
from wasmsched.wasm import guest_log


def setup_logging(verbosity: int) -> None:
    """-v 0: warnings and errors, the lines kube logs at V(0) (util/klog.py V0: start-up, serving, leader
    election) and guests' Info; -v 2 (kube-scheduler's usual): info such as bindings; -v 5+: debug."""
    level = V0 if verbosity <= 0 else logging.INFO if verbosity < 5 else logging.DEBUG
    handler = KlogHandler(sys.stderr)
    root = logging.getLogger("wasmsched")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    # kube-scheduler's wasm host logs a guest's lines with klog at verbosity 0, so they show whatever -v
    # says; a guest is silenced with its plugin's `logSeverity`.
    guest_log.set_sink(handler)
