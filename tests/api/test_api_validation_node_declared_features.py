"""Node status.declaredFeatures validation (pkg/apis/core/validation's validateNodeDeclaredFeatures):
port of validation_test.go's TestValidateNodeDeclaredFeatures and TestAllRegistedNodeDeclaredFeatures."""

from __future__ import annotations

import json

import pytest

from wasmsched.api.manifest import ManifestError, load_text
from wasmsched.api.types import Node
from wasmsched.api.validation.core import validate_node
from wasmsched.api.validation.field import DUPLICATE, INVALID
from wasmsched.plugins.nodedeclaredfeatures.features import ALL_FEATURES

NAME_FORMAT = (
    "must start with an UpperCamelCase segment, with subsequent segments separated by '/' (e.g., MyFeature or "
    "MyFeature/mySubFeature), and contain only alphanumeric characters and slashes"
)


def node_with(features: list[str]) -> Node:
    n = Node()
    n.metadata.name = "test-node"
    n.metadata.resourceVersion = "1"
    n.status.declaredFeatures.extend(features)
    return n


CASES = [
    ("empty feature list", [], None),
    ("valid features", ["AnotherFeature", "MyFeature", "MyFeature/SubFeature"], None),
    ("duplicate feature names", ["MyFeature", "MyFeature"],
     (DUPLICATE, "status.declaredFeatures[1]", "Duplicate value")),
    ("unsorted feature names", ["MyFeature", "AnotherFeature"],
     (INVALID, "status.declaredFeatures[1]", "list must be sorted alphabetically")),
    ("mixed valid and invalid", ["AnotherFeature", "invalid", "MyFeature"], ("", "", "")),
    ("invalid feature name format", ["myFeature"], (INVALID, "status.declaredFeatures[0]", "invalid feature name")),
    ("invalid feature name - kebab-case", ["Feature-name"],
     (INVALID, "status.declaredFeatures[0]", "invalid feature name")),
    ("invalid feature name - ends with slash", ["FeatureA/"],
     (INVALID, "status.declaredFeatures[0]", "invalid feature name")),
    ("invalid feature name - name too long", ["F" + "e" * 253],
     (INVALID, "status.declaredFeatures[0]", "invalid feature name")),
]


@pytest.mark.parametrize(("name", "features", "want"), CASES, ids=[c[0] for c in CASES])
def test_validate_node_declared_features(name: str, features: list[str], want: tuple[str, str, str] | None) -> None:
    errs = validate_node(node_with(features))
    if want is None:
        assert errs == []
        return
    assert errs
    typ, path, msg = want
    if typ:
        assert any(e.type == typ and e.field == path and msg in str(e) for e in errs), errs


def test_messages() -> None:
    """The exact texts, in kube's order: each entry's name, then its order against the next entry
    (byte order: "Zed" sorts before "bad-name", "bad-name" after "Fee...")."""
    long_name = "F" + "e" * 253
    errs = validate_node(node_with(["Zed", "bad-name", "bad-name", long_name]))
    assert [str(e) for e in errs] == [
        f'status.declaredFeatures[1]: Invalid value: "bad-name": invalid feature name "bad-name": {NAME_FORMAT}',
        'status.declaredFeatures[2]: Duplicate value: "bad-name"',
        f'status.declaredFeatures[2]: Invalid value: "bad-name": invalid feature name "bad-name": {NAME_FORMAT}',
        f'status.declaredFeatures[3]: Invalid value: "{long_name}": list must be sorted alphabetically',
        f'status.declaredFeatures[3]: Invalid value: "{long_name}": invalid feature name "{long_name}": '
        "must be no more than 253 characters",
    ]


def test_lowercase_sub_segment_allowed() -> None:
    assert validate_node(node_with(["A1/b2/C3"])) == []
    assert validate_node(node_with(["A/1b"])) != []
    assert validate_node(node_with(["A\n"])) != []  # Go's `$` does not match before a final newline


def test_manifest_rejects_invalid_declared_features() -> None:
    text = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {declaredFeatures: [B, A]}\n"
    with pytest.raises(ManifestError) as exc:
        load_text(text, "x.yaml")
    assert str(exc.value) == (
        'x.yaml: document 1 (Node n1): Node "n1" is invalid: '
        'status.declaredFeatures[1]: Invalid value: "A": list must be sorted alphabetically'
    )


def test_all_registered_node_declared_features() -> None:
    """TestAllRegistedNodeDeclaredFeatures: every registered name is valid; the registry stays small."""
    names = sorted(f.name() for f in ALL_FEATURES)
    assert validate_node(node_with(names)) == [], json.dumps(names)
    assert len(ALL_FEATURES) <= 128
