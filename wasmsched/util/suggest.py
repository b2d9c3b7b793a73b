""""Did you mean" for a name that is not one of a small closed set (plugin names, args keys)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_match(word: str, choices: Iterable[str]) -> str | None:
    """The choice `word` was most likely meant as: one that differs only in case, else difflib's
    closest (ignoring case, as `guestUrl` for `guestURL` or `noderesourcesfit` for `NodeResourcesFit`)."""
    by_lower: dict[str, str] = {}
    for c in choices:
        by_lower.setdefault(c.lower(), c)
    if word.lower() in by_lower:
        return by_lower[word.lower()]
    found = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.75)
    return by_lower[found[0]] if found else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`; did you mean "X"?`, to append to an error about `word`; "" when nothing is close."""
    match = close_match(word, [c for c in choices if c != word])
    return f'; did you mean "{match}"?' if match is not None else ""
