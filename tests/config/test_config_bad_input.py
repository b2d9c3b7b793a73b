"""Odd scheduler configurations: each is one line naming the file and the field, in kube's words,
with no Python internals (type names, reprs of dataclasses, tracebacks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wasmsched.api import decoding
from wasmsched.config import ConfigError, load_config

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
PYTHON_INTERNALS = ("NoneType", "PluginSet(", "Plugin(", "set_int_max_str_digits", "Traceback", "{'", "<class")


def error_of(tmp_path: Path, text: str) -> str:
    f = tmp_path / "scheduler.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(str(f))
    msg = str(exc.value)
    assert "\n" not in msg
    assert not any(s in msg for s in PYTHON_INTERNALS), msg
    return msg


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "scheduler.yaml: config is empty: expected a KubeSchedulerConfiguration object"),
        ("- a\n", "scheduler.yaml: config must be a KubeSchedulerConfiguration object, got array"),
        ("just text\n", "scheduler.yaml: config must be a KubeSchedulerConfiguration object, got string"),
        (
            HEADER + "profiles: 5\n",
            "scheduler.yaml: profiles: Invalid value: 5: cannot unmarshal number into a field of type array",
        ),
        (
            HEADER + "profiles: [{plugins: {score: {enabled: [7]}}}]\n",
            ("scheduler.yaml: profiles[0].plugins.score.enabled[0]: Invalid value: 7: cannot unmarshal number into a "
            "field of type object"),
        ),
        (
            HEADER + "extenders: {a: 1}\n",
            'scheduler.yaml: extenders: Invalid value: {"a":1}: cannot unmarshal object into a field of type array',
        ),
        (
            HEADER + "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: [1]}]}]\n",
            ("scheduler.yaml: profiles[0].pluginConfig[0].args: Invalid value: [1]: cannot unmarshal array into a "
            "field of type object"),
        ),
        (
            HEADER + "parallelism: 1" + "0" * 5000 + "\n",
            ("scheduler.yaml: parallelism: Invalid value: cannot unmarshal number 10000000000000000000... "
            "(5001 digits) into a field of type int32"),
        ),
        (
            HEADER + "profiles:\n- schedulerName: a\n"
            "  plugins: {queueSort: {enabled: [{name: X}], disabled: [{name: '*'}]}}\n"
            "- schedulerName: b\n",
            ('scheduler.yaml: profiles[1].plugins.queueSort: Invalid value: {"Enabled":null,"Disabled":null}: must be '
            "the same for all profiles"),
        ),
        (
            HEADER + "profiles: [{plugins: {score: {enabled: [{name: NodeResourcesFit},"
            " {name: NodeResourcesFit}]}}}]\n",
            ('scheduler.yaml: profiles[0].plugins.score.enabled[1]: Invalid value: "NodeResourcesFit": plugin '
            '"NodeResourcesFit" already registered as "ScorePlugin"'),
        ),
        (
            HEADER + "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: "
            "{type: LeastAllocated, resources: [{name: cpu, weight: -1}, {name: memory, weight: 101}]}}}]}]\n",
            ("scheduler.yaml: [profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: "
            "Invalid value: -1: resource weight of cpu not in valid range (0, 100], "
            "profiles[0].pluginConfig[0].args.scoringStrategy.resources[1].weight: Invalid value: 101: resource "
            "weight of memory not in valid range (0, 100]]"),
        ),
        (HEADER + "parallelism: 1\nparallelism: 2\n", 'scheduler.yaml:4:1: key "parallelism" already set in map'),
        (HEADER + "profiles: [\n", "scheduler.yaml:4:1: did not find expected node content"),
    ],
)
def test_one_line_errors(tmp_path: Path, text: str, expected: str) -> None:
    assert error_of(tmp_path, text) == expected


@pytest.mark.parametrize(
    "body",
    [
        "profiles: null\n",
        "profiles: [{plugins: null, pluginConfig: null}]\n",
        "profiles: [{pluginConfig: [{name: X, args: null}]}]\n",
    ],
)
def test_nulls_are_absent_fields(tmp_path: Path, body: str) -> None:
    f = tmp_path / "scheduler.yaml"
    f.write_text(HEADER + body)
    assert load_config(str(f)).profiles


def test_zero_resource_weight_is_defaulted(tmp_path: Path) -> None:
    # v1 defaults (SetDefaults_NodeResourcesFitArgs) turn weight 0 into 1 before validation
    f = tmp_path / "scheduler.yaml"
    f.write_text(HEADER + "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: "
                 "{type: LeastAllocated, resources: [{name: cpu, weight: 0}]}}}]}]\n")
    args = load_config(str(f)).profiles[0].args_for("NodeResourcesFit")
    assert args.scoring_strategy.resources[0].weight == 1  # type: ignore[attr-defined]


def test_alias_bomb_in_config(tmp_path: Path) -> None:
    lines = ["x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines.extend(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9))
    msg = error_of(tmp_path, HEADER + "\n".join(lines) + "\nprofiles: [{schedulerName: *a8}]\n")
    assert msg == "scheduler.yaml:1:1: document contains excessive aliasing"


def test_deep_config(tmp_path: Path) -> None:
    assert error_of(tmp_path, HEADER + "profiles: " + "[" * 100_000 + "]" * 100_000 + "\n") == (
        "scheduler.yaml:3:1010: exceeded maximum nesting depth"
    )


def test_dev_zero_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("wasmsched.config.load.MAX_CONFIG_BYTES", 2 * 1024 * 1024)
    with pytest.raises(ConfigError) as exc:
        load_config("/dev/zero")
    assert str(exc.value) == "zero: reading config: file is larger than 2097152 bytes (2 MiB)"
    assert decoding.MAX_CONFIG_BYTES == 16 * 1024 * 1024
