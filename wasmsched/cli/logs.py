"""klog-style structured logs on stderr: `I1130 10:08:49.123456   42 file.py:12] "msg" k="v"`."""

from __future__ import annotations

import logging
import os
import sys
import time

from wasmsched.util.klog import V0

_LEVEL_CHAR = {logging.DEBUG: "I", logging.INFO: "I", V0: "I", logging.WARNING: "W", logging.ERROR: "E",
               logging.CRITICAL: "F"}


class KlogFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        t = time.localtime(record.created)
        micros = int((record.created % 1) * 1_000_000)
        head = (f"{_LEVEL_CHAR.get(record.levelno, 'I')}{t.tm_mon:02d}{t.tm_mday:02d} "
                f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{micros:06d} {os.getpid():>7} "
                f"{record.filename}:{record.lineno}]")
        msg = record.getMessage()
        if not msg.startswith('"'):
            msg = f'"{msg}"'
        if record.exc_info:
            msg += "\n" + self.formatException(record.exc_info)
        return f"{head} {msg}"


# wasm guests' klog lines (wasm/host.py). kube-scheduler's wasm host logs a guest's Info with klog at
# verbosity 0, so they show by default; a guest is silenced with its plugin's `logSeverity`.
GUEST_LOGGER = "wasmsched.wasm.guest"


def setup_logging(verbosity: int) -> None:
    """-v 0: warnings and errors, the lines kube logs at V(0) (util/klog.py V0: start-up, serving, leader
    election) and guests' Info; -v 2 (kube-scheduler's usual): info such as bindings; -v 5+: debug."""
    level = V0 if verbosity <= 0 else logging.INFO if verbosity < 5 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(KlogFormatter())
    root = logging.getLogger("wasmsched")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    logging.getLogger(GUEST_LOGGER).setLevel(min(level, logging.INFO))
