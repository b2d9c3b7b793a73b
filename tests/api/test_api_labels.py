"""Label selector semantics (k8s.io/apimachinery/pkg/labels, metav1.LabelSelectorAsSelector)."""

from typing import Any

import pytest

from wasmsched.api.convert import dict_to_message
from wasmsched.api.labels import (
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_IN,
    SelectorError,
    compile_label_selector,
    compile_optional_label_selector,
    new_requirement,
    selector_from_set,
)
from wasmsched.api.types import LabelSelector, PodAffinityTerm


def sel(data: dict[str, Any]) -> LabelSelector:
    return dict_to_message(data, LabelSelector)


def test_nil_matches_nothing_and_empty_matches_everything() -> None:
    nothing = compile_label_selector(None)
    assert not nothing.matches({}) and not nothing.matches({"a": "b"})
    assert not nothing.empty()
    everything = compile_label_selector(sel({}))
    assert everything.matches({}) and everything.matches({"a": "b"})
    assert everything.empty()


def test_optional_selector_honours_presence() -> None:
    term = PodAffinityTerm()
    assert not compile_optional_label_selector(term, "labelSelector").matches({"a": "b"})
    term.labelSelector.SetInParent()
    assert compile_optional_label_selector(term, "labelSelector").matches({"a": "b"})


MATCH_CASES = [
    ({"matchLabels": {"x": "y"}}, {"x": "y"}, True),
    ({"matchLabels": {"x": "y"}}, {"x": "y", "z": "w"}, True),
    ({"matchLabels": {"x": "y"}}, {"x": "z"}, False),
    ({"matchLabels": {"x": "y", "z": "w"}}, {"x": "y"}, False),
    ({"matchExpressions": [{"key": "x", "operator": "In", "values": ["y", "z"]}]}, {"x": "z"}, True),
    ({"matchExpressions": [{"key": "x", "operator": "In", "values": ["y"]}]}, {}, False),
    ({"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["y"]}]}, {}, True),
    ({"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["y"]}]}, {"x": "y"}, False),
    ({"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["y"]}]}, {"x": "z"}, True),
    ({"matchExpressions": [{"key": "x", "operator": "Exists"}]}, {"x": ""}, True),
    ({"matchExpressions": [{"key": "x", "operator": "Exists"}]}, {"y": "x"}, False),
    ({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}, {"y": "x"}, True),
    ({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}, {"x": "1"}, False),
    (
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe"]}],
        },
        {"app": "web", "tier": "fe"},
        True,
    ),
    (
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe"]}],
        },
        {"app": "web", "tier": "be"},
        False,
    ),
]


@pytest.mark.parametrize(("selector", "labels", "want"), MATCH_CASES)
def test_matches(selector: dict[str, Any], labels: dict[str, str], want: bool) -> None:
    assert compile_label_selector(sel(selector)).matches(labels) is want


def test_matches_proto_map() -> None:
    from wasmsched.api.types import Pod

    pod = dict_to_message({"metadata": {"labels": {"app": "web"}}}, Pod)
    assert compile_label_selector(sel({"matchLabels": {"app": "web"}})).matches(pod.metadata.labels)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            {"matchExpressions": [{"key": "x", "operator": "Foo"}]},
            '"Foo" is not a valid label selector operator',
        ),
        ({"matchExpressions": [{"key": "x", "operator": "In"}]}, "values set can't be empty"),
        (
            {"matchExpressions": [{"key": "x", "operator": "Exists", "values": ["a"]}]},
            "values set must be empty",
        ),
        ({"matchLabels": {"bad key": "v"}}, "key: Invalid value"),
        ({"matchLabels": {"k": "bad value!"}}, "values[0]: Invalid value"),
        (
            {"matchExpressions": [{"key": "x", "operator": "Gt", "values": ["1"]}]},
            "is not a valid label selector operator",
        ),
    ],
)
def test_invalid_selectors(selector: dict[str, Any], message: str) -> None:
    with pytest.raises(SelectorError) as e:
        compile_label_selector(sel(selector))
    assert message in str(e.value)


def test_requirement_validation_and_gt_lt() -> None:
    gt = new_requirement("n", GREATER_THAN, ["1"])
    lt = new_requirement("n", LESS_THAN, ["7"])
    assert gt.matches({"n": "2"}) and not gt.matches({"n": "1"}) and not gt.matches({"n": "x"})
    assert not gt.matches({})
    assert lt.matches({"n": "-3"}) and not lt.matches({"n": "7"})
    with pytest.raises(SelectorError, match="must be an integer"):
        new_requirement("n", GREATER_THAN, ["a"])
    with pytest.raises(SelectorError, match="exactly one value"):
        new_requirement("n", LESS_THAN, ["1", "2"])
    with pytest.raises(SelectorError, match="one single value"):
        new_requirement("n", EQUALS, [])
    with pytest.raises(SelectorError, match="Unsupported value"):
        new_requirement("n", "~", [])


def test_string_forms() -> None:
    s = compile_label_selector(
        sel(
            {
                "matchLabels": {"b": "1"},
                "matchExpressions": [
                    {"key": "a", "operator": "In", "values": ["z", "y"]},
                    {"key": "c", "operator": "DoesNotExist"},
                    {"key": "d", "operator": "Exists"},
                    {"key": "e", "operator": "NotIn", "values": ["q"]},
                ],
            }
        )
    )
    assert str(s) == "a in (y,z),b=1,!c,d,e notin (q)"
    assert str(new_requirement("n", GREATER_THAN, ["1"])) == "n>1"
    assert str(new_requirement("x", IN, ["a"])) == "x in (a)"
    assert str(new_requirement("x", NOT_IN, ["a"])) == "x notin (a)"
    assert str(new_requirement("x", EXISTS, [])) == "x"


def test_selector_from_set() -> None:
    assert selector_from_set({}).empty()
    assert selector_from_set(None).matches({"a": "b"})
    s = selector_from_set({"a": "b", "c": "d"})
    assert s.matches({"a": "b", "c": "d", "e": "f"})
    assert not s.matches({"a": "b"})
    # unvalidated, like SelectorFromSet
    assert selector_from_set({"bad key": "x"}).matches({"bad key": "x"})
