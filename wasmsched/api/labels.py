"""Label selectors as in k8s.io/apimachinery/pkg/labels and metav1.LabelSelectorAsSelector.

Selectors are compiled once into plain-Python requirements and then matched against label
dicts (or the proto maps of `metadata.labels`, which behave like read-only mappings).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from wasmsched.api.types import LabelSelector
from wasmsched.api.validation import is_qualified_name, is_valid_label_value, parse_int64

# selection.Operator values
DOES_NOT_EXIST = "!"
EQUALS = "="
DOUBLE_EQUALS = "=="
IN = "in"
NOT_EQUALS = "!="
NOT_IN = "notin"
EXISTS = "exists"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_VALID_OPERATORS = (
    DOES_NOT_EXIST,
    EQUALS,
    DOUBLE_EQUALS,
    IN,
    NOT_EQUALS,
    NOT_IN,
    EXISTS,
    GREATER_THAN,
    LESS_THAN,
)

# metav1.LabelSelectorOperator -> selection.Operator
_LABEL_SELECTOR_OPS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


class SelectorError(ValueError):
    """An invalid selector or requirement, worded like the Kubernetes validation errors."""


def _go_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _go_values(values: Sequence[str]) -> str:
    # field.Error prints a []string bad value with json.Marshal
    return "[" + ",".join(_go_quote(v) for v in values) + "]"


def _field_join(path: str, child: str) -> str:
    return f"{path}.{child}" if path else child


@dataclass(frozen=True, slots=True)
class Requirement:
    """One key/operator/values requirement; `matches` follows labels.Requirement.Matches."""

    key: str
    operator: str
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether the label set satisfies this requirement."""
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op in (NOT_IN, NOT_EQUALS):
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            return self._compare(labels)
        return False

    def _compare(self, labels: Mapping[str, str]) -> bool:
        raw = labels.get(self.key)
        if raw is None or len(self.values) != 1:
            return False
        have = parse_int64(raw)
        want = parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if self.operator == GREATER_THAN else have < want

    def __str__(self) -> str:
        """The selector-syntax form, as labels.Requirement.String()."""
        op = self.operator
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        if op == EXISTS:
            return self.key
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({','.join(sorted(self.values))})"
        sym = {EQUALS: "=", DOUBLE_EQUALS: "==", NOT_EQUALS: "!=", GREATER_THAN: ">", LESS_THAN: "<"}[op]
        return self.key + sym + ",".join(self.values)


def new_requirement(key: str, operator: str, values: Iterable[str], path: str = "") -> Requirement:
    """Validate and build a Requirement, like labels.NewRequirement; raises SelectorError."""
    vals = tuple(values)
    errs: list[str] = []
    key_errs = is_qualified_name(key)
    if key_errs:
        errs.append(f"{_field_join(path, 'key')}: Invalid value: {_go_quote(key)}: {'; '.join(key_errs)}")
    values_path = _field_join(path, "values")
    if operator in (IN, NOT_IN):
        if not vals:
            errs.append(
                f"{values_path}: Invalid value: {_go_values(vals)}: "
                "for 'in', 'notin' operators, values set can't be empty"
            )
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(vals) != 1:
            errs.append(
                f"{values_path}: Invalid value: {_go_values(vals)}: exact-match compatibility requires one single value"
            )
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if vals:
            errs.append(
                f"{values_path}: Invalid value: {_go_values(vals)}: "
                "values set must be empty for exists and does not exist"
            )
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(vals) != 1:
            errs.append(
                f"{values_path}: Invalid value: {_go_values(vals)}: "
                "for 'Gt', 'Lt' operators, exactly one value is required"
            )
        for i, v in enumerate(vals):
            if parse_int64(v) is None:
                errs.append(
                    f"{values_path}[{i}]: Invalid value: {_go_quote(v)}: "
                    "for 'Gt', 'Lt' operators, the value must be an integer"
                )
    else:
        supported = ", ".join(_go_quote(o) for o in _VALID_OPERATORS)
        errs.append(
            f"{_field_join(path, 'operator')}: Unsupported value: {_go_quote(operator)}: supported values: {supported}"
        )
    for i, v in enumerate(vals):
        value_errs = is_valid_label_value(v)
        if value_errs:
            errs.append(f"{values_path}[{i}]: Invalid value: {_go_quote(v)}: {'; '.join(value_errs)}")
    if errs:
        raise SelectorError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return Requirement(key, operator, vals)


@dataclass(frozen=True, slots=True)
class Selector:
    """A compiled label selector: requirements ANDed; `nothing` marks labels.Nothing()."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether the label set satisfies every requirement (never, for Nothing)."""
        if self.nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        """True for the match-everything selector, like Selector.Empty()."""
        return not self.nothing and not self.requirements

    def __str__(self) -> str:
        """The selector-syntax form, as Selector.String()."""
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = Selector()
NOTHING = Selector(nothing=True)


def _sorted(reqs: Iterable[Requirement]) -> tuple[Requirement, ...]:
    # labels.internalSelector.Add keeps requirements sorted by key
    return tuple(sorted(reqs, key=lambda r: r.key))


def selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """Equality requirements for every pair, unvalidated (labels.SelectorFromSet); empty matches all."""
    if not labels:
        return EVERYTHING
    return Selector(_sorted(Requirement(k, EQUALS, (v,)) for k, v in labels.items()))


def compile_label_selector(selector: LabelSelector | None) -> Selector:
    """metav1.LabelSelectorAsSelector: None matches nothing, an empty selector everything."""
    if selector is None:
        return NOTHING
    if not selector.matchLabels and not selector.matchExpressions:
        return EVERYTHING
    reqs: list[Requirement] = []
    for k, v in selector.matchLabels.items():
        reqs.append(new_requirement(k, EQUALS, (v,)))
    for expr in selector.matchExpressions:
        op = _LABEL_SELECTOR_OPS.get(expr.operator)
        if op is None:
            raise SelectorError(f"{_go_quote(expr.operator)} is not a valid label selector operator")
        reqs.append(new_requirement(expr.key, op, expr.values))
    return Selector(_sorted(reqs))


def compile_optional_label_selector(owner: object, field: str) -> Selector:
    """Compile owner.<field> honouring proto presence: an unset field is a nil selector."""
    if not owner.HasField(field):  # type: ignore[attr-defined]
        return NOTHING
    sel: LabelSelector = getattr(owner, field)
    return compile_label_selector(sel)
