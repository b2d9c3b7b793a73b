"""A bad-input error is one line that keeps the file, the document, the field path and kube's reason in
view: long or multi-line values are cut and escaped, never the path or the reason (api/decoding.brief,
cli/simulate.py _error_text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.helpers import run_cli
from wasmsched.api.decoding import brief, brief_quoted_values

POD = "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers: [{{name: c, image: nginx}}]\n"


def error_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, *flags: str) -> str:
    f = tmp_path / "pod.yaml"
    f.write_text(POD.format(name=name))
    rc, out, err = run_cli(capsys, *flags, "simulate", str(f))
    assert (rc, out) == (2, "")
    assert err.count("\n") == 1, err
    return err.replace(str(f), "pod.yaml")


def test_a_254_character_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a60 = "a" * 60
    assert error_line(capsys, tmp_path, "a" * 254) == (
        f'error: pod.yaml: document 1 (Pod default/{a60}…): Pod "{a60}…" is invalid: metadata.name: '
        f'Invalid value: "{a60}…": must be no more than 253 characters\n')


def test_a_name_with_a_newline(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    err = error_line(capsys, tmp_path, '"a\\nb"')
    assert err.startswith('error: pod.yaml: document 1 (Pod default/a\\nb): Pod "a\\nb" is invalid: metadata.name: '
                          'Invalid value: "a\\nb": a lowercase RFC 1123 subdomain must consist of')


def test_whole_values_with_v_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert f'Invalid value: "{"a" * 254}"' in error_line(capsys, tmp_path, "a" * 254, "-v", "2")


def test_brief() -> None:
    assert brief("a\nb\t\"c\"") == 'a\\nb\\t\\"c\\"'
    assert brief("x" * 61) == "x" * 60 + "…"
    assert brief("x" * 60) == "x" * 60


def test_brief_quoted_values_cuts_values_only() -> None:
    long = "v" * 100
    msg = f'spec.x[{"k" * 80}]: Invalid value: "{long}": must be \'[a-z]\' and "short"'
    cut = f'spec.x[{"k" * 80}]: Invalid value: "{"v" * 60}…": must be \'[a-z]\' and "short"'
    assert brief_quoted_values(msg) == cut
    # An escape sequence at the cut is dropped whole.
    assert brief_quoted_values('"' + "v" * 59 + '\\n' + "w" * 10 + '"') == '"' + "v" * 59 + '…"'


def test_a_quoted_file_path_stays_whole(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 70) / "kubeconfig"
    deep.parent.mkdir()
    deep.write_text("")
    msg = f'kubeconfig "{deep}": Invalid kube-config file'
    assert brief_quoted_values(msg) == msg
    missing = f'kubeconfig "{tmp_path / ("m" * 70)}": no such file'
    assert brief_quoted_values(missing) == missing
    relative = f'kubeconfig "{"r" * 70}/config": no such file'
    assert brief_quoted_values(relative) != relative
