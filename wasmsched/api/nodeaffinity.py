"""Node selectors and node affinity as in k8s.io/component-helpers/scheduling/corev1/nodeaffinity.

Terms are ORed and requirements within a term ANDed; empty terms match nothing; a term that
fails to parse never matches (its errors are kept for reporting); matchFields supports only
In/NotIn with exactly one value and is compared against `metadata.name`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from wasmsched.api import labels as lbl
from wasmsched.api.types import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod

_NODE_SELECTOR_OPS = {
    "In": lbl.IN,
    "NotIn": lbl.NOT_IN,
    "Exists": lbl.EXISTS,
    "DoesNotExist": lbl.DOES_NOT_EXIST,
    "Gt": lbl.GREATER_THAN,
    "Lt": lbl.LESS_THAN,
}
_VALID_OPS = '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
_VALID_FIELD_OPS = '"In", "NotIn"'


def _node_fields(node: Node) -> dict[str, str]:
    """The field set a node exposes to matchFields (only a non-empty metadata.name)."""
    name = node.metadata.name
    return {"metadata.name": name} if name else {}


@dataclass(frozen=True, slots=True)
class _FieldRequirement:
    """fields.OneTermEqualSelector / OneTermNotEqualSelector; absent fields read as ""."""

    key: str
    value: str
    equal: bool

    def matches(self, fields: Mapping[str, str]) -> bool:
        return (fields.get(self.key, "") == self.value) == self.equal


@dataclass(frozen=True, slots=True)
class CompiledTerm:
    """One parsed NodeSelectorTerm; `errors` non-empty means it can never match."""

    match_labels: lbl.Selector | None = None
    match_fields: tuple[_FieldRequirement, ...] | None = None
    errors: tuple[str, ...] = ()

    def match(self, node_labels: Mapping[str, str], node_fields: Mapping[str, str]) -> bool:
        """Whether a node with these labels and fields satisfies the term."""
        if self.errors:
            return False
        if self.match_labels is not None and not self.match_labels.matches(node_labels):
            return False
        if self.match_fields is not None and node_fields:
            for r in self.match_fields:
                if not r.matches(node_fields):
                    return False
        return True


def _requirements_as_selector(
    reqs: Sequence[NodeSelectorRequirement], path: str
) -> tuple[lbl.Selector | None, list[str]]:
    """nodeSelectorRequirementsAsSelector: label requirements of one term, or its errors."""
    if not reqs:
        return lbl.NOTHING, []
    out: list[lbl.Requirement] = []
    errs: list[str] = []
    for i, expr in enumerate(reqs):
        p = f"{path}[{i}]"
        op = _NODE_SELECTOR_OPS.get(expr.operator)
        if op is None:
            errs.append(f'{p}.operator: Unsupported value: "{expr.operator}": supported values: {_VALID_OPS}')
            continue
        try:
            out.append(lbl.new_requirement(expr.key, op, expr.values, path=p))
        except lbl.SelectorError as e:
            errs.append(str(e))
    if errs:
        return None, errs
    return lbl.Selector(tuple(sorted(out, key=lambda r: r.key))), []


def _requirements_as_field_selector(
    reqs: Sequence[NodeSelectorRequirement], path: str
) -> tuple[tuple[_FieldRequirement, ...] | None, list[str]]:
    """nodeSelectorRequirementsAsFieldSelector: In/NotIn with exactly one value each."""
    out: list[_FieldRequirement] = []
    errs: list[str] = []
    for i, expr in enumerate(reqs):
        p = f"{path}[{i}]"
        if expr.operator in ("In", "NotIn"):
            if len(expr.values) != 1:
                vals = ",".join(f'"{v}"' for v in expr.values)
                errs.append(f"{p}.values: Invalid value: [{vals}]: must have one element")
            else:
                out.append(_FieldRequirement(expr.key, expr.values[0], expr.operator == "In"))
        else:
            errs.append(
                f'{p}.operator: Unsupported value: "{expr.operator}": supported values: {_VALID_FIELD_OPS}'
            )
    if errs:
        return None, errs
    return tuple(out), []


def _is_empty_term(term: NodeSelectorTerm) -> bool:
    return not term.matchExpressions and not term.matchFields


def compile_term(term: NodeSelectorTerm, path: str = "") -> CompiledTerm:
    """Parse one NodeSelectorTerm (newNodeSelectorTerm), collecting parse errors instead of raising."""
    errors: list[str] = []
    match_labels = None
    match_fields = None
    if term.matchExpressions:
        match_labels, errs = _requirements_as_selector(term.matchExpressions, f"{path}matchExpressions")
        errors.extend(errs)
    if term.matchFields:
        match_fields, errs = _requirements_as_field_selector(term.matchFields, f"{path}matchFields")
        errors.extend(errs)
    return CompiledTerm(match_labels, match_fields, tuple(errors))


@dataclass(frozen=True, slots=True)
class NodeSelectorMatcher:
    """A compiled v1.NodeSelector (LazyErrorNodeSelector): terms ORed, empty terms dropped."""

    terms: tuple[CompiledTerm, ...]

    @classmethod
    def compile(cls, selector: NodeSelector) -> NodeSelectorMatcher:
        """Compile every non-empty term of the selector."""
        return cls(
            tuple(
                compile_term(t, f"nodeSelectorTerms[{i}].")
                for i, t in enumerate(selector.nodeSelectorTerms)
                if not _is_empty_term(t)
            )
        )

    def errors(self) -> list[str]:
        """Parse errors of all terms (what NewNodeSelector would return)."""
        return [e for t in self.terms for e in t.errors]

    def match(self, node: Node) -> bool:
        """Whether any term matches the node."""
        labels = node.metadata.labels
        fields = _node_fields(node)
        return any(t.match(labels, fields) for t in self.terms)


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """pod.spec.nodeSelector plus requiredDuringSchedulingIgnoredDuringExecution (GetRequiredNodeAffinity)."""

    label_selector: lbl.Selector | None = None
    node_selector: NodeSelectorMatcher | None = None

    @classmethod
    def from_pod(cls, pod: Pod) -> RequiredNodeAffinity:
        """Parse the pod's node selector and required node affinity."""
        spec = pod.spec
        selector = lbl.selector_from_set(spec.nodeSelector) if spec.nodeSelector else None
        matcher = None
        if spec.HasField("affinity") and spec.affinity.HasField("nodeAffinity"):
            na = spec.affinity.nodeAffinity
            if na.HasField("requiredDuringSchedulingIgnoredDuringExecution"):
                matcher = NodeSelectorMatcher.compile(na.requiredDuringSchedulingIgnoredDuringExecution)
        return cls(selector, matcher)

    def match(self, node: Node) -> bool:
        """Whether the node satisfies both the nodeSelector and the required affinity."""
        if self.label_selector is not None and not self.label_selector.matches(node.metadata.labels):
            return False
        if self.node_selector is not None:
            return self.node_selector.match(node)
        return True


@dataclass(frozen=True, slots=True)
class _WeightedTerm:
    term: CompiledTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerms:
    """Compiled preferredDuringSchedulingIgnoredDuringExecution; zero-weight and empty terms skipped."""

    terms: tuple[_WeightedTerm, ...] = ()
    errors: tuple[str, ...] = field(default=())

    @classmethod
    def compile(cls, terms: Iterable[object]) -> PreferredSchedulingTerms:
        """Parse v1.PreferredSchedulingTerm messages (NewPreferredSchedulingTerms; errors kept, not raised)."""
        parsed: list[_WeightedTerm] = []
        errors: list[str] = []
        for i, t in enumerate(terms):
            weight: int = t.weight  # type: ignore[attr-defined]
            pref: NodeSelectorTerm = t.preference  # type: ignore[attr-defined]
            if weight == 0 or _is_empty_term(pref):
                continue
            term = compile_term(pref, f"[{i}].")
            if term.errors:
                errors.extend(term.errors)
            else:
                parsed.append(_WeightedTerm(term, weight))
        return cls(tuple(parsed), tuple(errors))

    @classmethod
    def from_pod(cls, pod: Pod) -> PreferredSchedulingTerms:
        """The pod's preferred node affinity terms."""
        spec = pod.spec
        if not (spec.HasField("affinity") and spec.affinity.HasField("nodeAffinity")):
            return cls()
        return cls.compile(spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution)

    def score(self, node: Node) -> int:
        """Sum of the weights of the terms matching the node."""
        labels = node.metadata.labels
        fields = _node_fields(node)
        return sum(t.weight for t in self.terms if t.term.match(labels, fields))
