"""Memos: values computed once per object version and kept with the object (a NodeInfo's, a PodInfo's, a
PodShape's `memo`), and the keys that name them.

A memo is a plain dict at run time (hot loops read it with dict.get), typed for mypy through `Memo`: every
key is a `MemoKey[T]` made once by the code that owns the value, and the value stored under it is a T.
Keys compare by identity, so two plugins (or two instances of one plugin with other arguments) cannot
collide on a name, and hashing a key costs nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterator
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

T = TypeVar("T")


class MemoKey(Generic[T]):
    """The key of one kind of value in memos; `name` is for reading, not for lookup."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"MemoKey({self.name!r})"


if TYPE_CHECKING:
    class Memo(Protocol):
        """A dict from MemoKey[T] to T."""

        def get(self, key: MemoKey[T], /) -> T | None: ...

        def __getitem__(self, key: MemoKey[T], /) -> T: ...

        def __setitem__(self, key: MemoKey[T], value: T, /) -> None: ...

        def __contains__(self, key: object, /) -> bool: ...

        def __len__(self) -> int: ...

        def __iter__(self) -> Iterator[MemoKey[Any]]: ...
else:
    Memo = dict


def new_memo(*entries: tuple[MemoKey[Any], Any]) -> Memo:
    """An empty memo, or one holding `entries`."""
    return cast("Memo", dict(entries))


# The most entries a memo table of results by token keeps (it is emptied when full).
MAX_MEMO_ENTRIES = 256
_MAX_TOKENS = 4096
_tokens: dict[tuple[MemoKey[Any], Hashable], int] = {}
_token_ids = itertools.count()


def token(key: MemoKey[Any], args: Hashable) -> int:
    """A small int naming (`key`, `args`) (args compared by equality), so that per-node tables of results
    hash an int instead of the arguments. Tokens are never reused: dropping the table only loses sharing."""
    k = (key, args)
    tok = _tokens.get(k)
    if tok is None:
        if len(_tokens) >= _MAX_TOKENS:
            _tokens.clear()
        tok = next(_token_ids)
        _tokens[k] = tok
    return tok
