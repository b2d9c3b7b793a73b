"""Preemption candidates: a node and the victims to evict there (preemption.go's candidate types)."""

from __future__ import annotations

from dataclasses import dataclass, field

from wasmsched.api.types import Pod


@dataclass(slots=True)
class Victims:
    """extenderv1.Victims: the pods to preempt, ordered by importance (highest first)."""

    pods: list[Pod] = field(default_factory=list)
    num_pdb_violations: int = 0


@dataclass(slots=True)
class Candidate:
    """A node the preemptor could be nominated to, with the victims to evict there."""

    name: str
    victims: Victims


class CandidateList:
    """A bounded list (candidateList): adds beyond `size` are dropped, as kube's atomic array does."""

    __slots__ = ("_size", "items")

    def __init__(self, size: int) -> None:
        self._size = size
        self.items: list[Candidate] = []

    def add(self, c: Candidate) -> None:
        if len(self.items) < self._size:
            self.items.append(c)

    def size(self) -> int:
        return len(self.items)

    def get(self) -> list[Candidate]:
        return self.items
