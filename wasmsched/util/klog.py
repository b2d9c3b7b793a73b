"""klog's conventions in Python logging, and its line format: the one definition of it.

Structured values: a string value in a log line is quoted as Go's %q would (JSON's quoting, non-ASCII
kept), so an error text with quotes or newlines stays one parseable `key="value"`.

Verbosity: klog's `V(0).Info` lines are shown whatever -v says (kube logs start-up, serving and leader
election milestones so); wasmsched's plain `info` lines are kube's V(2) and show from -v 2 on. A line
kube logs at V(0) is logged at level V0: `log.log(V0, '"Serving securely on %s"', addr)`.

Lines: `I1130 10:08:49.123456   42 file.py:12] "msg" k="v"` (KlogFormatter), written by a KlogHandler.
The native wasm host writes guest lines itself, formatted as KlogFormatter formats them, to the file
descriptor of the KlogHandler registered as their sink (wasm/guest_log.py); tests/wasm/test_klog_native.py
holds it to this module's format byte for byte.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from typing import TextIO

# Between INFO (shown from -v 2) and WARNING (always shown); -v 0 shows it (wasmsched/cli/logs.py).
V0 = logging.INFO + 5
logging.addLevelName(V0, "INFO")

_LEVEL_CHAR = {logging.DEBUG: "I", logging.INFO: "I", V0: "I", logging.WARNING: "W", logging.ERROR: "E",
               logging.CRITICAL: "F"}


def quote(value: object) -> str:
    return json.dumps(str(value), ensure_ascii=False)


def structured(msg: str, kvs: Sequence[str]) -> str:
    """klog's structured text of InfoS/ErrorS: the quoted message, then ` key="value"` per pair; a key
    without a value gets "(MISSING)"."""
    pairs = list(kvs)
    if len(pairs) % 2:
        pairs.append("(MISSING)")
    text = json.dumps(msg, ensure_ascii=False)
    for i in range(0, len(pairs), 2):
        text += f" {pairs[i]}={json.dumps(pairs[i + 1], ensure_ascii=False)}"
    return text


def level_char(levelno: int) -> str:
    """The severity letter a line of this logging level starts with."""
    return _LEVEL_CHAR.get(levelno, "I")


class KlogFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        t = time.localtime(record.created)
        micros = int((record.created % 1) * 1_000_000)
        head = (f"{level_char(record.levelno)}{t.tm_mon:02d}{t.tm_mday:02d} "
                f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{micros:06d} {os.getpid():>7} "
                f"{record.filename}:{record.lineno}]")
        msg = record.getMessage()
        if not msg.startswith('"'):
            msg = f'"{msg}"'
        if record.exc_info:
            msg += "\n" + self.formatException(record.exc_info)
        return f"{head} {msg}"


class KlogHandler(logging.StreamHandler[TextIO]):
    """klog lines on a stream: the CLI's handler, and the sink of guest lines it registers."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self.setFormatter(KlogFormatter())

    def fileno(self) -> int:
        """The stream's file descriptor, for lines written to it directly (formatted as here), after what
        the stream holds; -1 when it has none."""
        try:
            self.flush()
            return int(self.stream.fileno())
        except (AttributeError, OSError, ValueError):
            return -1
