"""A misspelt plugin name or args key is named with the closest known one (util/suggest.py): plugin names
are a closed set (the in-tree registry and the configured wasm plugins), and so are the args' keys."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.e2e.helpers import run_cli
from wasmsched.util.suggest import close_match, did_you_mean
from wasmsched.wasm.args import decode_args

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n"


def simulate(capsys: pytest.CaptureFixture[str], tmp_path: Path, config: str) -> tuple[int, str]:
    cfg = tmp_path / "scheduler.yaml"
    cfg.write_text(HEADER + config)
    (tmp_path / "nodes.yaml").write_text(NODE)
    rc, _, err = run_cli(capsys, "simulate", "--config", str(cfg), str(tmp_path / "nodes.yaml"))
    return rc, err.replace(str(cfg), "scheduler.yaml")


def test_guest_url_in_the_wrong_case_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, err = simulate(capsys, tmp_path, """\
profiles:
- plugins: {multiPoint: {enabled: [{name: AvoidZone}]}}
  pluginConfig:
  - {name: AvoidZone, args: {guestUrl: avoidzone.wasm}}
""")
    assert rc == 2
    assert err == ('error: scheduler.yaml: pluginConfig "AvoidZone": args: unknown key "guestUrl"; '
                   "did you mean \"guestURL\"? (a wasm plugin's args need guestURL)\n")


def test_an_unknown_plugin_name_suggests_the_closest(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, err = simulate(capsys, tmp_path, "profiles:\n- plugins: {score: {enabled: [{name: NodeResourceFit}]}}\n")
    assert rc == 2
    assert err == ('error: scheduler.yaml: profile "default-scheduler": plugin "NodeResourceFit" does not exist; '
                   'did you mean "NodeResourcesFit"?\n')


def test_a_name_like_none_gets_no_suggestion(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, err = simulate(capsys, tmp_path, "profiles:\n- plugins: {score: {enabled: [{name: AvoidZone}]}}\n")
    assert (rc, err) == (2, 'error: scheduler.yaml: profile "default-scheduler": plugin "AvoidZone" does not exist\n')


def test_an_unknown_wasm_args_key_warns_with_the_closest(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "wasmsched.wasm"):
        decode_args("AvoidZone", {"guestURL": "a.wasm", "guestconfig": "{}", "bogus": 1})
    assert [r.getMessage() for r in caplog.records] == [
        "plugin AvoidZone: unknown key 'guestconfig' in args, ignored; did you mean 'guestConfig'?",
        "plugin AvoidZone: unknown key 'bogus' in args, ignored"]


@pytest.mark.parametrize(("word", "want"), [("guestUrl", "guestURL"), ("GUESTURL", "guestURL"),
                                            ("guest_url", "guestURL"), ("nodeaffinity", "NodeAffinity"),
                                            ("TaintTolerations", "TaintToleration"), ("url", None)])
def test_close_match(word: str, want: str | None) -> None:
    known = ["guestURL", "guestConfig", "NodeAffinity", "TaintToleration", "NodeResourcesFit"]
    assert close_match(word, known) == want


def test_did_you_mean_never_suggests_the_word_itself() -> None:
    assert did_you_mean("NodeAffinity", ["NodeAffinity"]) == ""
