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


# ----- labels.Parse: the selector syntax of `?labelSelector=` and `kubectl -l` ----------------------------

# The lexer's tokens (selector.go's Token constants).
_ERROR, _END, _CLOSED_PAR, _COMMA, _DOES_NOT_EXIST, _DOUBLE_EQUALS, _EQUALS, _GREATER_THAN, _IDENTIFIER, _IN, \
    _LESS_THAN, _NOT_EQUALS, _NOT_IN, _OPEN_PAR = range(14)
_STRING_TO_TOKEN = {
    ")": _CLOSED_PAR, ",": _COMMA, "!": _DOES_NOT_EXIST, "==": _DOUBLE_EQUALS, "=": _EQUALS, ">": _GREATER_THAN,
    "in": _IN, "<": _LESS_THAN, "!=": _NOT_EQUALS, "notin": _NOT_IN, "(": _OPEN_PAR,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
# binaryOperators, in selector.go's order (parseOperator's error lists them)
_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_OPERATOR_OF_TOKEN = {_IN: IN, _EQUALS: EQUALS, _DOUBLE_EQUALS: DOUBLE_EQUALS, _GREATER_THAN: GREATER_THAN,
                      _LESS_THAN: LESS_THAN, _NOT_IN: NOT_IN, _NOT_EQUALS: NOT_EQUALS}


def _lex(s: str) -> list[tuple[int, str]]:
    """Lexer.Lex until the end of the string (Parser.scan): every (token, literal)."""
    out: list[tuple[int, str]] = []
    pos, n = 0, len(s)
    while True:
        while pos < n and s[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            out.append((_END, ""))
            return out
        if s[pos] in _SPECIAL:
            # scanSpecialSymbol: the longest run of special symbols that is still a token
            buf = ""
            last: tuple[int, str] | None = None
            while pos < n and s[pos] in _SPECIAL:
                buf += s[pos]
                tok = _STRING_TO_TOKEN.get(buf)
                if tok is not None:
                    last = (tok, buf)
                elif last is not None:
                    break
                pos += 1
            if last is None:
                out.append((_ERROR, f"error expected: keyword found '{buf}'"))
            else:
                out.append(last)
            continue
        start = pos
        while pos < n and s[pos] not in _SPECIAL and s[pos] not in _WHITESPACE:
            pos += 1
        word = s[start:pos]
        out.append((_STRING_TO_TOKEN.get(word, _IDENTIFIER), word))


class _SelectorParser:
    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.position = 0

    def lookahead(self, values: bool) -> tuple[int, str]:
        tok, lit = self.items[self.position]
        if values and tok in (_IN, _NOT_IN):
            tok = _IDENTIFIER
        return tok, lit

    def consume(self, values: bool) -> tuple[int, str]:
        tok, lit = self.lookahead(values)
        self.position += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.lookahead(True)
            if tok in (_IDENTIFIER, _DOES_NOT_EXIST):
                try:
                    reqs.append(self.requirement())
                except SelectorError as e:
                    raise SelectorError(f"unable to parse requirement: {e}") from None
                t, lit2 = self.consume(True)
                if t == _END:
                    return reqs
                if t == _COMMA:
                    t2, l2 = self.lookahead(True)
                    if t2 not in (_IDENTIFIER, _DOES_NOT_EXIST):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok == _END:
                return reqs
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        key, operator = self.key_and_inferred_operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, operator, ())
        operator = self.operator()
        values = self.values() if operator in (IN, NOT_IN) else self.exact_value()
        return new_requirement(key, operator, sorted(values))

    def key_and_inferred_operator(self) -> tuple[str, str]:
        operator = ""
        tok, lit = self.consume(True)
        if tok == _DOES_NOT_EXIST:
            operator = DOES_NOT_EXIST
            tok, lit = self.consume(True)
        if tok != _IDENTIFIER:
            raise SelectorError(f"found '{lit}', expected: identifier")
        errs = is_qualified_name(lit)
        if errs:
            # validateLabelKey with the parser's (empty) path
            raise SelectorError(f": Invalid value: {_go_quote(lit)}: {'; '.join(errs)}")
        if self.lookahead(True)[0] in (_END, _COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        return lit, operator

    def operator(self) -> str:
        tok, lit = self.consume(False)
        op = _OPERATOR_OF_TOKEN.get(tok)
        if op is None:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return op

    def values(self) -> set[str]:
        tok, lit = self.consume(True)
        if tok != _OPEN_PAR:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(True)
        if tok in (_IDENTIFIER, _COMMA):
            s = self.identifiers()
            if self.consume(True)[0] != _CLOSED_PAR:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return s
        if tok == _CLOSED_PAR:  # "()"
            self.consume(True)
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def identifiers(self) -> set[str]:
        s: set[str] = set()
        while True:
            tok, lit = self.consume(True)
            if tok == _IDENTIFIER:
                s.add(lit)
                tok2, lit2 = self.lookahead(True)
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSED_PAR:
                    return s
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not s:
                    s.add("")  # "(,"
                tok2 = self.lookahead(True)[0]
                if tok2 == _CLOSED_PAR:
                    s.add("")  # ",)"
                    return s
                if tok2 == _COMMA:
                    s.add("")  # ",,"
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.lookahead(True)[0] in (_END, _COMMA):
            return {""}
        tok, lit = self.consume(True)
        if tok == _IDENTIFIER:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse_selector(text: str) -> Selector:
    """labels.Parse: the selector syntax (`a=b,c!=d,e in (f,g),!h,i`) as a Selector, requirements sorted by
    key; "" selects everything. Raises SelectorError with labels.Parse's text."""
    return Selector(_sorted(_SelectorParser(text).parse()))
