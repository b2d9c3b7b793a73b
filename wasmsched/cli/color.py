"""Colour on terminals, and the CLI's `error:`/`warning:` lines on stderr.

Colour is used only where it is wanted: `--color always|never` decide; `auto` (the default) colours
a stream that is a terminal whose TERM is set and not "dumb", unless NO_COLOR is set to anything
non-empty (no-color.org). Escape codes are added to text already laid out, so widths computed on
plain text stay right.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

MODES = ("auto", "always", "never")

RED = "31"
GREEN = "32"
YELLOW = "33"
BOLD_RED = "1;31"
BOLD_YELLOW = "1;33"


class _Settings:
    mode = "auto"


settings = _Settings()


def set_mode(mode: str) -> None:
    """--color: one setting for the process, as the flag is given once on the command line."""
    if mode not in MODES:
        raise ValueError(f"color mode {mode!r}: not one of {', '.join(MODES)}")
    settings.mode = mode


def enabled(stream: TextIO) -> bool:
    if settings.mode != "auto":
        return settings.mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM", "dumb") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def paint(text: str, style: str, on: bool) -> str:
    """`text` in SGR `style` when `on`; no style, or no text, is left as it is."""
    return f"\x1b[{style}m{text}\x1b[0m" if on and style and text else text


def error(message: str, stream: TextIO | None = None) -> None:
    """`error: <message>` on stderr, the prefix in bold red on a terminal."""
    _prefixed("error:", BOLD_RED, message, stream)


def warning(message: str, stream: TextIO | None = None) -> None:
    """`warning: <message>` on stderr, the prefix in bold yellow on a terminal."""
    _prefixed("warning:", BOLD_YELLOW, message, stream)


def _prefixed(prefix: str, style: str, message: str, stream: TextIO | None) -> None:
    out = stream if stream is not None else sys.stderr  # looked up now: tests and callers replace sys.stderr
    print(f"{paint(prefix, style, enabled(out))} {message}", file=out)
