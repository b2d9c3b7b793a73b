"""Manifest loading: files, directories, multi-document YAML, lists, defaults and errors."""

import json
from pathlib import Path
from typing import cast

import pytest

from wasmsched.api.manifest import BASE_CREATION_SECONDS, ManifestError, load_paths, load_text
from wasmsched.api.types import Node, Pod

PODS = """
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers: [{name: c, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: team, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  containers: [{name: c, image: nginx}]
---
"""

NODES_LIST = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: high}
  value: 100
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_multi_document_and_defaults() -> None:
    loaded = load_text(PODS, "pods.yaml")
    pods = cast(list[Pod], loaded.of_kind("Pod"))
    assert [p.metadata.name for p in pods] == ["a", "b"]
    a, b = pods
    assert isinstance(a, Pod)
    assert a.metadata.namespace == "default"
    assert b.metadata.namespace == "team"
    assert a.metadata.uid and a.metadata.uid != b.metadata.uid
    assert a.metadata.creationTimestamp.seconds == BASE_CREATION_SECONDS
    assert b.metadata.creationTimestamp.seconds == 1577836800
    # deterministic
    again = cast(list[Pod], load_text(PODS, "pods.yaml").of_kind("Pod"))
    assert again[0].metadata.uid == a.metadata.uid


def test_list_kinds() -> None:
    loaded = load_text(NODES_LIST)
    node = loaded.of_kind("Node")[0]
    assert isinstance(node, Node)
    assert node.metadata.namespace == ""  # cluster-scoped
    assert loaded.of_kind("PriorityClass")[0].value == 100  # type: ignore[attr-defined]


def test_typed_list_items_without_type_meta() -> None:
    text = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "PodList",
            "items": [
                {"metadata": {"name": "p1"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
                {"metadata": {"name": "p2"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
            ],
        }
    )
    loaded = load_text(text, "pods.json")
    assert [p.metadata.name for p in cast(list[Pod], loaded.of_kind("Pod"))] == ["p1", "p2"]


def test_directory_recursion_sorted_and_timestamps_in_order(tmp_path: Path) -> None:
    write(tmp_path / "b" / "nodes.yml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    write(
        tmp_path / "a.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec: {containers: [{name: c, image: nginx}]}\n",
    )
    write(
        tmp_path / "c" / "d" / "ns.json",
        json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}),
    )
    write(tmp_path / "readme.txt", "not a manifest")
    loaded = load_paths([tmp_path])
    assert [o.kind for o in loaded.objects] == ["Pod", "Node", "Namespace"]
    stamps = [o.message.metadata.creationTimestamp.seconds for o in loaded.objects]  # type: ignore[attr-defined]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3
    assert loaded.objects[1].source.endswith("nodes.yml")


def test_unknown_kind_is_a_warning(tmp_path: Path) -> None:
    f = write(tmp_path / "deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
    loaded = load_paths([f])
    assert loaded.objects == []
    assert len(loaded.warnings) == 1
    assert "deploy.yaml" in loaded.warnings[0] and "Deployment" in loaded.warnings[0]


def test_bad_yaml_names_the_file(tmp_path: Path) -> None:
    f = write(tmp_path / "broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: [\n")
    with pytest.raises(ManifestError, match=r"broken\.yaml:4:1: did not find expected node content$"):
        load_paths([f])


def test_bad_json_names_the_file(tmp_path: Path) -> None:
    f = write(tmp_path / "broken.json", "{")
    with pytest.raises(ManifestError, match=r"broken\.json:1:2: Expecting property name enclosed in double quotes$"):
        load_paths([f])


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("kind: Pod\nmetadata: {name: a}\n", r"x\.yaml: document 1 \(Pod a\): apiVersion: required"),
        ("apiVersion: v1\nmetadata: {name: a}\n", r"x\.yaml: document 1 \(a\): kind: required"),
        (
            (
                "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\n"
                "metadata: {name: p, namespace: ns}\n"
                "spec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}\n"
            ),
            (
                r"x\.yaml: document 2 \(Pod ns/p\): spec\.containers\[0\]\.resources\.requests\.cpu: "
                r"quantities must match the regular expression"
            ),
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {nodeNmae: n1}\n",
            r'spec\.nodeNmae: unknown field "nodeNmae"',
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {priority: high}\n",
            r"spec\.priority: cannot unmarshal string",
        ),
        (
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {x: 1}}\n",
            r"document 1, items\[0\] \(Pod a\): spec\.x: unknown field",
        ),
        ("apiVersion: v1\nkind: Pod\nspec: {}\n", r"metadata\.name: Required value: name or generateName is required"),
        ("- 1\n- 2\n", r"document 1: expected an object"),
    ],
)
def test_errors(tmp_path: Path, text: str, pattern: str) -> None:
    f = write(tmp_path / "x.yaml", text)
    with pytest.raises(ManifestError, match=pattern):
        load_paths([f])


def test_missing_path() -> None:
    with pytest.raises(ManifestError, match="no such file"):
        load_paths(["/nonexistent/cluster"])


def test_yaml_timestamps_stay_strings() -> None:
    loaded = load_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, creationTimestamp: 2024-01-01T00:00:00Z}\n"
        "spec: {containers: [{name: c, image: nginx}]}\n"
    )
    assert loaded.of_kind("Pod")[0].metadata.creationTimestamp.seconds == 1704067200  # type: ignore[attr-defined]


def test_generate_name() -> None:
    loaded = load_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\nspec: {containers: [{name: c, image: nginx}]}\n"
    )
    name = loaded.of_kind("Pod")[0].metadata.name  # type: ignore[attr-defined]
    assert name.startswith("web-") and len(name) == len("web-") + 5


@pytest.mark.parametrize(("doc", "resource"), [
    ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
     "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: x}}]}}\n", 'resourceclaims.resource.k8s.io "c"'),
    ("apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: c}\n"
     "spec: {attacher: a, nodeName: n, source: {persistentVolumeName: pv}}\n", 'volumeattachments.storage.k8s.io "c"'),
])
def test_a_duplicate_of_a_storage_or_device_object_names_both_places(doc: str, resource: str) -> None:
    """Every kind simulate applies is checked for duplicates, named as the API server names its resource."""
    with pytest.raises(ManifestError, match=f"{resource} already exists \\(first defined in x.yaml: document 1\\)"):
        load_text(doc + "---\n" + doc, "x.yaml")
