"""`wasmsched completion bash|zsh`: a valid script that completes subcommands (nested ones too), each
subcommand's options, and the values of options with choices, from the parser itself."""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path

import pytest

from wasmsched.cli.completion import script
from wasmsched.cli.main import SUBCOMMANDS, main

COMPLETE = """\
source "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$(( $# - 1 ))
_wasmsched
printf '%s\\n' "${COMPREPLY[@]}"
"""


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["completion", "bash"]) == 0
    path = tmp_path_factory.mktemp("completion") / "wasmsched.bash"
    path.write_text(out.getvalue())
    return path


def complete(script_path: Path, *words: str) -> list[str]:
    """What bash offers for the last word of `wasmsched WORDS...` (the last one may be "")."""
    proc = subprocess.run(["bash", "-c", COMPLETE, "complete", str(script_path), "wasmsched", *words],
                          capture_output=True, text=True, check=True, timeout=30)
    assert proc.stderr == ""
    return [w for w in proc.stdout.splitlines() if w]


def test_the_bash_script_is_valid(bash_script: Path) -> None:
    subprocess.run(["bash", "-n", str(bash_script)], check=True, timeout=30)


def test_subcommands(bash_script: Path) -> None:
    assert complete(bash_script, "sim") == ["simulate"]
    assert complete(bash_script, "") == list(SUBCOMMANDS)
    assert complete(bash_script, "dev-cluster", "") == [
        "up", "down", "restart-apiserver", "stop-etcd", "continue-etcd", "proxy"]
    assert complete(bash_script, "dev-cluster", "st") == ["stop-etcd"]
    assert complete(bash_script, "completion", "") == ["bash", "zsh"]


def test_options_of_each_subcommand(bash_script: Path) -> None:
    assert complete(bash_script, "simulate", "--ex") == ["--explain"]
    assert complete(bash_script, "-v", "2", "simulate", "--ou") == ["--output", "--out"]
    assert "--kubeconfig" in complete(bash_script, "run", "--")
    assert complete(bash_script, "dev-cluster", "up", "--no") == ["--nodes"]
    assert complete(bash_script, "--c") == ["--color"]


def test_values_of_options_with_choices_and_files_otherwise(bash_script: Path) -> None:
    assert complete(bash_script, "simulate", "-o", "") == ["table", "json", "yaml"]
    assert complete(bash_script, "simulate", "--color", "n") == ["never"]
    # PATHs and --config FILE: nothing from the script, so bash completes file names (complete -o default).
    assert complete(bash_script, "simulate", "--config", "") == []
    assert complete(bash_script, "simulate", "cluster.yaml", "") == []


def test_the_zsh_script_loads_the_bash_one_through_bashcompinit() -> None:
    # zsh completes through its bash-completion layer; the bash script is the one tested above.
    text = script("zsh")
    assert "bashcompinit" in text and script("bash") in text
