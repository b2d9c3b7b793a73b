"""api/labels.py parse_selector: labels.Parse's syntax, matching and error texts (selector_test.go)."""

from __future__ import annotations

import pytest

from wasmsched.api.labels import SelectorError, parse_selector


@pytest.mark.parametrize(("text", "labels", "want"), [
    ("", {"x": "y"}, True),
    ("x=y", {"x": "y"}, True),
    ("x=y", {"x": "z"}, False),
    ("x==y", {"x": "y"}, True),
    ("x!=y", {}, True),
    ("x!=y", {"x": "y"}, False),
    ("x", {"x": ""}, True),
    ("!x", {"x": ""}, False),
    ("!x", {"y": "a"}, True),
    ("x in (a,b)", {"x": "b"}, True),
    ("x in (a,b)", {"x": "c"}, False),
    ("x notin (a,b)", {"x": "c"}, True),
    ("x notin (a,b)", {}, True),
    ("x in (foo,,baz),y,z notin ()", {"x": "", "y": "1"}, True),
    ("x in (foo,,baz),y,z notin ()", {"x": "foo"}, False),
    ("x>1", {"x": "2"}, True),
    ("x<1", {"x": "2"}, False),
    ("  a = b ,c  ", {"a": "b", "c": "d"}, True),
    ("x=", {"x": ""}, True),
    ("x in (in)", {"x": "in"}, True),
    ("example.com/k=v", {"example.com/k": "v"}, True),
])
def test_matches(text: str, labels: dict[str, str], want: bool) -> None:
    assert parse_selector(text).matches(labels) is want


def test_requirements_are_sorted_by_key_and_printed_as_kube_does() -> None:
    assert str(parse_selector("z=1,a in (c,b),!m")) == "a in (b,c),!m,z=1"


@pytest.mark.parametrize(("text", "error"), [
    ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
    ("x=a,", "found '', expected: identifier after ','"),
    ("x in (", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
    ("x in a", "unable to parse requirement: found 'a' expected: '('"),
    ("=a", "found '=', expected: !, identifier, or 'end of string'"),
    ("x=a b", "found 'b', expected: ',' or 'end of string'"),
    ("x>a", "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("x=a=b", "found '=', expected: ',' or 'end of string'"),
    ("_x=a", 'unable to parse requirement: : Invalid value: "_x"'),
])
def test_errors(text: str, error: str) -> None:
    with pytest.raises(SelectorError) as e:
        parse_selector(text)
    assert error in str(e.value)
