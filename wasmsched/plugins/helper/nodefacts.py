"""Node affinity over a node's facts (`framework/node_facts.py`): the same logic as
wasmsched.api.nodeaffinity's match/score, reading the copied labels and fields instead of the node object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from wasmsched.api.nodeaffinity import NodeSelectorMatcher, PreferredSchedulingTerms, RequiredNodeAffinity


class LabelsAndFields(Protocol):
    """What these functions read of a node: a NodeFacts, or the labels a columnar form projects onto."""

    @property
    def labels(self) -> Mapping[str, str]: ...

    @property
    def fields(self) -> Mapping[str, str]: ...


def node_selector_matches(sel: NodeSelectorMatcher, f: LabelsAndFields) -> bool:
    """NodeSelectorMatcher.match(f.node): any term matches."""
    labels = f.labels
    fields = f.fields
    return any(t.match(labels, fields) for t in sel.terms)


def required_node_affinity_matches(required: RequiredNodeAffinity, f: LabelsAndFields) -> bool:
    """RequiredNodeAffinity.match(f.node)."""
    if required.label_selector is not None and not required.label_selector.matches(f.labels):
        return False
    if required.node_selector is not None:
        return node_selector_matches(required.node_selector, f)
    return True


def preferred_terms_score(terms: PreferredSchedulingTerms, f: LabelsAndFields) -> int:
    """PreferredSchedulingTerms.score(f.node): the weights of the matching terms."""
    labels = f.labels
    fields = f.fields
    return sum(t.weight for t in terms.terms if t.term.match(labels, fields))
