"""Typed views of queueing-hint arguments, as pkg/scheduler/util.As.

Hint functions get the old and new objects of a cluster event; a wrong type is an error in kube,
which the queue treats as Queue. Here `None` is returned for that case so hints can return Queue.
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def as_pair(cls: type[T], old_obj: Any, new_obj: Any) -> tuple[T | None, T | None] | None:
    """(old, new) typed as cls (either may be None), or None if a non-None object has another type."""
    if new_obj is not None and not isinstance(new_obj, cls):
        return None
    if old_obj is not None and not isinstance(old_obj, cls):
        return None
    return old_obj, new_obj


def as_both(cls: type[T], old_obj: Any, new_obj: Any) -> tuple[T, T] | None:
    """(old, new) of an update, both typed as cls; None if either is missing or of another type.

    Hints that compare the two and answer Queue for anything else start with this.
    """
    if not isinstance(old_obj, cls) or not isinstance(new_obj, cls):
        return None
    return old_obj, new_obj


def as_update(cls: type[T], old_obj: Any, new_obj: Any) -> tuple[T | None, T] | None:
    """(old, new) of an add (old None) or update typed as cls; None if new is None or a type is wrong.

    Hints whose answer to both of those cases is Queue start with this.
    """
    typed = as_pair(cls, old_obj, new_obj)
    if typed is None or typed[1] is None:
        return None
    return typed[0], typed[1]
