"""Node affinity tables adapted from component-helpers nodeaffinity_test.go."""

from typing import Any

import pytest

from wasmsched.api.convert import dict_to_message
from wasmsched.api.nodeaffinity import NodeSelectorMatcher, PreferredSchedulingTerms, RequiredNodeAffinity
from wasmsched.api.types import Node, NodeSelector, Pod


def node(name: str = "", labels: dict[str, str] | None = None) -> Node:
    n = Node()
    if name:
        n.metadata.name = name
    for k, v in (labels or {}).items():
        n.metadata.labels[k] = v
    return n


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)} if values else {"key": key, "operator": op}


def matcher(terms: list[dict[str, Any]]) -> NodeSelectorMatcher:
    return NodeSelectorMatcher.compile(dict_to_message({"nodeSelectorTerms": terms}, NodeSelector))


def test_invalid_terms_report_errors_and_never_match() -> None:
    m = matcher(
        [
            {"matchFields": [expr("metadata.name", "In", "host_1", "host_2")]},
            {
                "matchExpressions": [expr("label_1", "In", "label_1_val")],
                "matchFields": [expr("metadata.name", "In", "host_1")],
            },
            {"matchExpressions": [expr("invalid key", "In", "label_value")]},
        ]
    )
    errors = m.errors()
    assert len(errors) == 2
    assert errors[0].startswith("nodeSelectorTerms[0].matchFields[0].values: Invalid value")
    assert errors[0].endswith("must have one element")
    assert errors[1].startswith("nodeSelectorTerms[2].matchExpressions[0].key: Invalid value")
    assert "name part must consist of alphanumeric characters" in errors[1]
    assert not m.match(node("host_1"))
    assert m.match(node("host_1", {"label_1": "label_1_val"}))


@pytest.mark.parametrize(
    ("terms", "n", "want"),
    [
        (
            [
                {
                    "matchExpressions": [expr("label_1", "In", "label_1_val")],
                    "matchFields": [expr("metadata.name", "In", "host_1")],
                }
            ],
            node("host_1"),
            False,
        ),
        (
            [
                {
                    "matchExpressions": [expr("label_1", "In", "label_1_val")],
                    "matchFields": [expr("metadata.name", "In", "host_1")],
                }
            ],
            node("host_1", {"label_1": "label_1_val"}),
            True,
        ),
        (
            [
                {"matchExpressions": [expr("label_1", "In", "label_1_val")]},
                {"matchFields": [expr("metadata.name", "In", "host_1")]},
            ],
            node("host_1"),
            True,
        ),
        ([{"matchFields": [expr("metadata.name", "NotIn", "host_1")]}], node("host_1"), False),
        ([{"matchFields": [expr("metadata.name", "NotIn", "host_1")]}], node("host_2"), True),
        # matchFields are ignored for a node without a name (no fields to compare)
        ([{"matchFields": [expr("metadata.name", "In", "host_1")]}], node(""), True),
        ([{"matchFields": [expr("metadata.name", "Exists")]}], node("host_1"), False),
        ([{}], node("host_1", {"a": "b"}), False),
        ([], node("host_1", {"a": "b"}), False),
        (
            [{"matchExpressions": [expr("kernel-version", "Gt", "0204")]}],
            node("n", {"kernel-version": "0206"}),
            True,
        ),
        (
            [{"matchExpressions": [expr("kernel-version", "Lt", "0204")]}],
            node("n", {"kernel-version": "0206"}),
            False,
        ),
        (
            [{"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]}],
            node("n", {"mem-type": "DDR3"}),
            True,
        ),
        ([{"matchExpressions": [expr("GPU", "Exists")]}], node("n", {"GPU": "NVIDIA-GRID-K1"}), True),
        ([{"matchExpressions": [expr("foo", "In", "value1", "value2")]}], node("n", {"foo": "bar"}), False),
        ([{"matchExpressions": [expr("foo", "Bogus", "x")]}], node("n", {"foo": "x"}), False),
        ([{"matchExpressions": [expr("foo", "Gt", "x")]}], node("n", {"foo": "1"}), False),
    ],
)
def test_node_selector_match(terms: list[dict[str, Any]], n: Node, want: bool) -> None:
    assert matcher(terms).match(n) is want


def test_preferred_scheduling_terms_score() -> None:
    terms = [
        {"weight": 5, "preference": {"matchFields": [expr("metadata.name", "In", "host_1")]}},
        {"weight": 7, "preference": {"matchExpressions": [expr("unknown_label", "In", "unknown_label_val")]}},
        {"weight": 11, "preference": {"matchExpressions": [expr("label_1", "In", "label_1_val")]}},
        {"weight": 0, "preference": {"matchFields": [expr("metadata.name", "In", "host_1", "host_2")]}},
        {"weight": 3, "preference": {}},
    ]
    pod = dict_to_message(
        {"spec": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}}},
        Pod,
    )
    pref = PreferredSchedulingTerms.from_pod(pod)
    assert pref.errors == ()
    assert pref.score(node("host_1", {"label_1": "label_1_val"})) == 16
    assert PreferredSchedulingTerms.from_pod(Pod()).score(node("x")) == 0


def test_preferred_terms_with_errors() -> None:
    terms = [{"weight": 1, "preference": {"matchFields": [expr("metadata.name", "In", "host_1", "host_2")]}}]
    pod = dict_to_message(
        {"spec": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}}},
        Pod,
    )
    pref = PreferredSchedulingTerms.from_pod(pod)
    assert pref.errors and pref.errors[0].startswith("[0].matchFields[0].values")


@pytest.mark.parametrize(
    ("spec", "labels", "want"),
    [
        ({}, {}, True),
        ({"nodeSelector": {"foo": "bar"}}, {}, False),
        ({"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, True),
        ({"nodeSelector": {"foo": "bar"}}, {"foo": "bar", "baz": "blah"}, True),
        ({"nodeSelector": {"foo": "bar", "baz": "blah"}}, {"foo": "bar"}, False),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [expr("foo", "In", "bar", "value2")]}]
                        }
                    }
                }
            },
            {"foo": "bar"},
            True,
        ),
        (
            {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}},
            {"foo": "bar"},
            False,
        ),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": []}]
                        }
                    }
                }
            },
            {"foo": "bar"},
            False,
        ),
        ({"affinity": {"nodeAffinity": {}}}, {"foo": "bar"}, True),
        (
            {
                "nodeSelector": {"foo": "bar"},
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [expr("foo", "Exists")]}]
                        }
                    }
                },
            },
            {"foo": "baz"},
            False,
        ),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [expr("foo", "In", "x")]},
                                {"matchExpressions": [expr("diff", "Exists")]},
                            ]
                        }
                    }
                }
            },
            {"foo": "bar", "diff": "1"},
            True,
        ),
    ],
)
def test_required_node_affinity(spec: dict[str, Any], labels: dict[str, str], want: bool) -> None:
    pod = dict_to_message({"spec": spec}, Pod)
    assert RequiredNodeAffinity.from_pod(pod).match(node("n", labels)) is want
