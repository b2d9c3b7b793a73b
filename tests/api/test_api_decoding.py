"""The strict input loader: size limits while reading, alias bombs, nesting depth, duplicate keys,
huge numbers and one-line syntax errors, for manifests (and the shared loader the config uses)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from wasmsched.api import decoding
from wasmsched.api.decoding import DecodeError, PureLoader, check_aliasing, load_json, load_yaml, read_limited
from wasmsched.api.manifest import ManifestError, load_paths, load_text

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: nginx}]}\n"


def billion_laughs(field: str) -> str:
    """A manifest whose `field` expands to 9**9 strings through nested aliases."""
    lines = ["x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines.extend(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9))
    if field == "kind":
        lines.append("apiVersion: v1\nkind: *a8\nmetadata: {name: p}")
    else:
        lines.append(f"apiVersion: v1\nkind: Pod\nmetadata: {{{field}: *a8}}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- 1. alias bombs


@pytest.mark.parametrize("field", ["name", "namespace", "kind"])
def test_alias_bomb_is_refused(tmp_path: Path, field: str) -> None:
    f = tmp_path / "bomb.yaml"
    f.write_text(billion_laughs(field))
    # It hung before: the error formatter expanded the value. The message is the alias error, with
    # nothing of the value in it.
    with pytest.raises(ManifestError) as exc:
        load_paths([f])
    assert str(exc.value) == f"{f}:1:1: document contains excessive aliasing"


@pytest.mark.parametrize("loader", [decoding.LOADER, PureLoader])
def test_alias_bomb_both_loaders(loader: object) -> None:
    with pytest.raises(DecodeError, match="document contains excessive aliasing"):
        load_yaml(billion_laughs("name"), "x.yaml", loader)


def test_go_yaml_alias_ratio_rule() -> None:
    # 150 aliases of a 9-element list: about 1,500 alias decodes out of 1,650, a ratio of 0.91 < 0.99
    ok = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\nb: [" + ", ".join(["*a"] * 150) + "]\n"
    assert len(load_yaml(ok, "x.yaml")["b"]) == 150
    # the same aliases to a 500-element list: over 99% of the decodes come from aliases
    big = "a: &a [" + ", ".join(["1"] * 500) + "]\nb: [" + ", ".join(["*a"] * 150) + "]\n"
    with pytest.raises(DecodeError, match="excessive aliasing"):
        load_yaml(big, "x.yaml")


def test_anchor_containing_itself() -> None:
    with pytest.raises(DecodeError, match=r"^x\.yaml:1:\d+: anchor value contains itself$"):
        load_yaml("a: &a [1, *a]\n", "x.yaml")


def test_check_aliasing_ignores_plain_documents() -> None:
    loader = decoding.LOADER("a: {b: [1, 2, {c: d}]}\n")
    try:
        check_aliasing(loader.get_single_node())
    finally:
        loader.dispose()


def test_large_values_are_cut_in_messages(tmp_path: Path) -> None:
    f = tmp_path / "x.yaml"
    kind = "[" + ", ".join(["abc"] * 50_000) + "]"
    f.write_text("apiVersion: v1\nkind: " + kind + "\nmetadata: {name: " + "n" * 50_000 + "}\n")
    with pytest.raises(ManifestError) as exc:
        load_paths([f])
    assert len(str(exc.value)) < 600
    assert "kind must be a string" in str(exc.value) or "apiVersion and kind must be strings" in str(exc.value)


# ---------------------------------------------------------------- 2. bounded reads


def test_dev_zero_is_refused_while_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decoding, "MAX_MANIFEST_BYTES", 4 * 1024 * 1024)
    monkeypatch.setattr("wasmsched.api.manifest.MAX_MANIFEST_BYTES", 4 * 1024 * 1024)
    with pytest.raises(ManifestError, match=r"^/dev/zero: file is larger than 4194304 bytes \(4 MiB\)$"):
        load_paths(["/dev/zero"])


def test_read_limited_counts_while_reading(tmp_path: Path) -> None:
    f = tmp_path / "x.yaml"
    f.write_bytes(b"a" * 3000)
    assert len(read_limited(str(f), 3000)) == 3000
    with pytest.raises(DecodeError, match="file is larger than 2999 bytes"):
        read_limited(str(f), 2999)


def test_named_pipe_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pods.yaml"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "w") as w:
            w.write(POD)

    t = threading.Thread(target=write)
    t.start()
    loaded = load_paths([fifo])
    t.join()
    assert [p.metadata.name for p in loaded.of_kind("Pod")] == ["p"]  # type: ignore[attr-defined]


def test_invalid_utf8(tmp_path: Path) -> None:
    f = tmp_path / "x.yaml"
    f.write_bytes(b"a: \xff\n")
    with pytest.raises(ManifestError, match=r"x\.yaml: invalid UTF-8 at byte offset 3$"):
        load_paths([f])


# ---------------------------------------------------------------- 3. nesting depth


def test_json_nested_100000_deep(tmp_path: Path) -> None:
    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ManifestError, match=r"deep\.json:1:10001: exceeded max depth of 10000$"):
        load_paths([f])


def test_json_nesting_below_go_limit_parses() -> None:
    # deeper than Python's recursion limit, within encoding/json's: decoded, then refused by the schema
    deep = "[" * 5000 + "]" * 5000
    assert load_json(deep, "x.json") is not None
    text = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": ' + deep + "}}"
    with pytest.raises(ManifestError, match=r"metadata\.labels: cannot unmarshal array into a field of type map"):
        load_text(text, "x.json")


@pytest.mark.parametrize("loader", [decoding.LOADER, PureLoader])
@pytest.mark.parametrize("flow", [True, False])
def test_yaml_nested_deep(flow: bool, loader: object) -> None:
    n = 100_000 if flow else 5000
    text = "a: " + "[" * n + "]" * n if flow else "".join("  " * i + "a:\n" for i in range(n))
    with pytest.raises(DecodeError, match=r"x\.yaml:\d+:\d+: exceeded maximum nesting depth$"):
        load_yaml(text, "x.yaml", loader)


def test_yaml_nesting_within_libyaml_limit_parses() -> None:
    assert load_yaml("a: " + "[" * 999 + "]" * 999, "x.yaml") is not None


# ---------------------------------------------------------------- 6. huge numbers


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_huge_integer_in_an_int_field(tmp_path: Path, suffix: str) -> None:
    big = "1" + "0" * 5000
    text = (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{priority: {big}}}\n"
        if suffix == "yaml"
        else f'{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "p"}}, "spec": {{"priority": {big}}}}}'
    )
    f = tmp_path / f"x.{suffix}"
    f.write_text(text)
    with pytest.raises(ManifestError) as exc:
        load_paths([f])
    msg = str(exc.value)
    assert msg.endswith(
        "spec.priority: cannot unmarshal number 10000000000000000000... (5001 digits) into a field of type int32: "
        "out of range"
    )
    assert "sys.set_int_max_str_digits" not in msg and "4300" not in msg


@pytest.mark.parametrize("value", ["1" + "0" * 5000, '"1' + "0" * 5000 + '"', '"0.' + "0" * 5000 + '1"'])
def test_huge_quantity(value: str) -> None:
    text = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
        f"status: {{allocatable: {{cpu: {value}}}}}\n"
    )
    with pytest.raises(ManifestError) as exc:
        load_text(text, "x.yaml")
    assert str(exc.value) == (
        "x.yaml: document 1 (Node n): status.allocatable.cpu: unable to parse numeric part of quantity"
    )


# ---------------------------------------------------------------- 8. syntax errors


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p\n  namespace: [\n",
            "x.yaml:4:12: did not find expected ',' or '}'",
        ),
        ("a: b: c\n", "x.yaml:1:5: mapping values are not allowed in this context"),
        ("a: 'unterminated\n", "x.yaml:2:1: found unexpected end of stream"),
        ("\ta: 1\n", "x.yaml:1:1: found character that cannot start any token"),
    ],
)
def test_yaml_syntax_error_is_one_line(text: str, expected: str) -> None:
    with pytest.raises(ManifestError) as exc:
        load_text(text, "x.yaml")
    assert str(exc.value) == expected


def test_json_syntax_error_is_one_line() -> None:
    with pytest.raises(ManifestError) as exc:
        load_text('{"a": 1,\n "b": }', "x.json")
    assert str(exc.value) == "x.json:2:7: Expecting value"


# ---------------------------------------------------------------- 9. duplicate keys


def test_duplicate_yaml_key() -> None:
    with pytest.raises(ManifestError) as exc:
        load_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n", "x.yaml")
    assert str(exc.value) == 'x.yaml:5:3: key "name" already set in map'


def test_duplicate_json_key() -> None:
    with pytest.raises(ManifestError) as exc:
        load_text('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "name": "b"}}', "x.json")
    assert str(exc.value) == 'x.json: strict decoding error: duplicate field "name"'


def test_merge_keys_may_be_overridden() -> None:
    doc = load_yaml("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\n", "x.yaml")
    assert doc["d"] == {"x": 3, "y": 2}
    with pytest.raises(DecodeError, match='key "x" already set in map'):
        load_yaml("base: &b {x: 1}\nd:\n  <<: *b\n  x: 3\n  x: 4\n", "x.yaml")


def test_huge_unknown_key_is_cut_in_messages() -> None:
    with pytest.raises(ManifestError) as exc:
        key = "k" * 100_000
        load_text('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "' + key + '": 1}}', "x.json")
    assert len(str(exc.value)) < 600
    assert "(100000 characters)" in str(exc.value)
