"""docs/tutorial.md works as written: its files, built with the standard Go toolchain against sdk/go,
give the outputs it shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.e2e.helpers import run_cli
from tests.e2e.test_go_examples import summary, table_rows
from tests.go_guests import ROOT, builds_go, run_ok

TUTORIAL = ROOT / "docs" / "tutorial.md"


def files() -> dict[str, str]:
    """The tutorial's ```<lang> file=<path> blocks."""
    text = TUTORIAL.read_text()
    return {m.group(1): m.group(2) for m in re.finditer(r"```\w+ file=(\S+)\n(.*?)```", text, re.DOTALL)}


def console_blocks() -> list[list[str]]:
    text = TUTORIAL.read_text()
    return [m.group(1).rstrip("\n").split("\n") for m in re.finditer(r"```console\n(.*?)```", text, re.DOTALL)]


def go_commands() -> list[tuple[dict[str, str], list[str]]]:
    """Every `$ [VAR=value ...] go ...` command of the console blocks: (environment, argv), with
    $WASMSCHED expanded."""
    out = []
    for block in console_blocks():
        for line in block:
            if not line.startswith("$ "):
                continue
            argv = shlex.split(line.removeprefix("$ ").replace("$WASMSCHED", str(ROOT)))
            env = {}
            while argv and "=" in argv[0]:
                k, v = argv.pop(0).split("=", 1)
                env[k] = v
            if argv[0] == "go":
                out.append((env, argv))
    return out


def test_each_file_is_named_in_the_prose_before_its_listing() -> None:
    """Rendered Markdown hides a fence's info string (`go file=main.go`): the reader sees the name only in the
    text right before the listing."""
    text = TUTORIAL.read_text()
    for m in re.finditer(r"```\w+ file=(\S+)\n", text):
        before = text[:m.start()].rstrip("\n").rsplit("\n\n", 1)[-1]
        assert f"`{m.group(1)}`" in before, f"{m.group(1)}: not named before its listing"


def test_wasmsched_is_set_before_it_is_used_and_links_resolve() -> None:
    text = TUTORIAL.read_text()
    assert text.index("$ export WASMSCHED=") < text.index("$WASMSCHED/")
    for target in re.findall(r"\]\(([^)#:]+)\)", text):
        assert (TUTORIAL.parent / target).exists(), target
    assert "parent" not in text.split("## Next", 1)[1]


@pytest.fixture(scope="module")
@builds_go
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tutorial's module, created, tested and built with its own commands."""
    d = tmp_path_factory.mktemp("tutorial") / "avoidzone"
    d.mkdir()
    for name, body in files().items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(body)
    for env, argv in go_commands():
        run_ok(argv, d, env)
    assert (d / "avoidzone.wasm").exists()
    return d


def test_the_tutorial_lists_the_steps_it_is_tested_by() -> None:
    # Chapter 8's ZoneQuota (ABI v2: pods per node and a custom resource) is built and tested in the same
    # module by the same `go test ./...`.
    assert set(files()) == {"avoidzone/avoidzone.go", "avoidzone/avoidzone_test.go", "main.go", "scheduler.yaml",
                            "cluster.yaml", "zonequota/zonequota.go", "zonequota/zonequota_test.go"}
    steps = [argv[:3] for _, argv in go_commands()]
    assert steps[:2] == [["go", "mod", "init"], ["go", "mod", "edit"]]
    assert ["go", "test", "./..."] in steps


@pytest.mark.parametrize("index", [0, 1])
def test_simulate_outputs_match(index: int, plugin_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(plugin_dir)
    blocks = [b for b in console_blocks() if "wasmsched simulate" in b[0]]
    assert len(blocks) == 2
    block = blocks[index]
    argv = shlex.split(block[0].removeprefix("$ ").replace("$WASMSCHED", str(ROOT)))
    assert argv[0].endswith(".venv/bin/wasmsched")
    rc, out, err = run_cli(capsys, *argv[1:])
    assert rc == 0, err
    got = out.rstrip("\n").split("\n")
    assert table_rows(got) == table_rows(block)
    assert summary(got) == summary(block)


def test_logs_shown_in_debugging(plugin_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(plugin_dir)
    rc, _, err = run_cli(capsys, "-v", "2", "simulate", "--config", "scheduler.yaml", "cluster.yaml")
    assert rc == 0
    shown = re.findall(r'^  I\d+ [\d:.]+ +\d+ (\S+\] .*)$', TUTORIAL.read_text(), re.MULTILINE)
    assert len(shown) == 3
    for line in shown:
        assert line.split("] ", 1)[1] in err


def test_bad_config_message(plugin_dir: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(plugin_dir)
    bad = plugin_dir / "bad.yaml"
    bad.write_text((plugin_dir / "scheduler.yaml").read_text().replace("'{\"zones\": [\"zone-a\"]}'", "'{}'"))
    rc, _, err = run_cli(capsys, "simulate", "--config", str(bad), "cluster.yaml")
    assert rc == 2
    assert ('initializing plugin "AvoidZone": failed to create a guest pool: wasm: instantiate error: panic: '
            "plugin.Set: AvoidZone: guestConfig: zones: must list at least one zone") in err
