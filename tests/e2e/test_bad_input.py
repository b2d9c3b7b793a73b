"""`wasmsched simulate` on bad input, end to end: exit code 2 and one line on stderr naming the file
(and document and object) and the field, for every kind of bad input the loaders refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import run_cli

NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers: [{{name: c, image: nginx{extra}}}]\n"
HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def pod(name: str = "p1", extra: str = "", spec: str = "") -> str:
    return POD.format(name=name, extra=extra) + spec


def bomb(field: str) -> str:
    lines = ["x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines.extend(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9))
    return "\n".join(lines) + f"\napiVersion: v1\nkind: Pod\nmetadata: {{{field}: *a8}}\n"


# case -> (file name, content, the text stderr must contain after "error: <file>")
MANIFESTS: dict[str, tuple[str, str, str]] = {
    "alias-bomb-name": ("bomb.yaml", bomb("name"), ":1:1: document contains excessive aliasing"),
    "alias-bomb-namespace": ("bomb.yaml", bomb("namespace"), ":1:1: document contains excessive aliasing"),
    "json-100000-deep": ("deep.json", "[" * 100_000 + "]" * 100_000, ":1:10001: exceeded max depth of 10000"),
    "yaml-100000-deep": ("deep.yaml", "a: " + "[" * 100_000 + "]" * 100_000, ":1:1003: exceeded maximum nesting depth"),
    "huge-int": (
        "x.yaml",
        pod(spec="  priority: 1" + "0" * 5000 + "\n"),
        (": document 1 (Pod p1): spec.priority: cannot unmarshal number 10000000000000000000... (5001 digits) into "
        "a field of type int32: out of range"),
    ),
    "huge-quantity": (
        "x.yaml",
        pod(extra=", resources: {requests: {cpu: '1" + "0" * 5000 + "'}}"),
        ": document 1 (Pod p1): spec.containers[0].resources.requests.cpu: unable to parse numeric part of quantity",
    ),
    "yaml-syntax": (
        "x.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p\n  namespace: [\n",
        ":4:12: did not find expected ',' or '}'",
    ),
    "duplicate-yaml-key": ("x.yaml", "apiVersion: v1\nkind: Pod\nkind: Node\n", ':3:1: key "kind" already set in map'),
    "duplicate-json-key": (
        "x.json",
        '{"apiVersion": "v1", "apiVersion": "v1"}',
        ': strict decoding error: duplicate field "apiVersion"',
    ),
    "negative-cpu": (
        "x.yaml",
        pod(extra=", resources: {requests: {cpu: '-10'}}"),
        (': document 1 (Pod default/p1): Pod "p1" is invalid: spec.containers[0].resources.requests[cpu]: '
        'Invalid value: "-10": must be greater than or equal to 0'),
    ),
    "bogus-affinity-operator": (
        "x.yaml",
        pod(spec="  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "      - {topologyKey: zone, labelSelector: {matchExpressions: [{key: a, operator: Bogus}]}}\n"),
        (': document 1 (Pod default/p1): Pod "p1" is invalid: spec.affinity.podAffinity.'
        "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator: "
        'Invalid value: "Bogus": not a valid selector operator'),
    ),
    "spread-selector": (
        "x.yaml",
        pod(spec="  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
                 " labelSelector: {matchExpressions: [{key: a, operator: In}]}}\n"),
        (': document 1 (Pod default/p1): Pod "p1" is invalid: spec.topologySpreadConstraints[0].labelSelector.'
        "matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
    ),
    "taint-effect": (
        "x.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nspec: {taints: [{key: k, effect: Bogus}]}\n",
        (': document 1 (Node n2): Node "n2" is invalid: metadata.taints[0].effect: Unsupported value: "Bogus": '
        'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'),
    ),
    "toleration-exists-with-value": (
        "x.yaml",
        pod(spec="  tolerations: [{key: k, operator: Exists, value: v}]\n"),
        (': document 1 (Pod default/p1): Pod "p1" is invalid: spec.tolerations[0].operator: Invalid value: "v": '
        "value must be empty when `operator` is 'Exists'"),
    ),
    "pod-name": (
        "x.yaml",
        pod(name="A_B"),
        (': document 1 (Pod default/A_B): Pod "A_B" is invalid: metadata.name: Invalid value: "A_B": '
        "a lowercase RFC 1123 subdomain must consist of"),
    ),
    "pdb-both": (
        "x.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n"
        "spec: {minAvailable: 1, maxUnavailable: 1}\n",
        (": document 1 (PodDisruptionBudget default/b): PodDisruptionBudget.policy \"b\" is invalid: spec: Invalid "
        "value: "),
    ),
    "pod-priority-not-its-class": (
        "x.yaml",
        pod(spec="  priority: 1000\n"),
        (': document 1: spec.priority: pods "p1" is forbidden: the integer value of priority (1000) must not be '
         "provided in pod spec; priority admission controller computed 0 from the given PriorityClass name"),
    ),
    "pod-preemption-policy-not-its-class": (
        "x.yaml",
        pod(spec="  preemptionPolicy: Never\n"),
        (': document 1: spec.preemptionPolicy: pods "p1" is forbidden: the string value of PreemptionPolicy (Never) '
         "must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the "
         "given PriorityClass name"),
    ),
    "pod-unknown-priority-class": (
        "x.yaml",
        pod(spec="  priorityClassName: gold\n"),
        ': document 1: spec.priorityClassName: pods "p1" is forbidden: no PriorityClass with name gold was found',
    ),
    "priority-too-high": (
        "x.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: top}\nvalue: 2000000000\n",
        (': document 1 (PriorityClass top): PriorityClass.scheduling.k8s.io "top" is invalid: value: Forbidden: '
        "maximum allowed value of a user defined priority is 1000000000"),
    ),
}


@pytest.mark.parametrize("case", sorted(MANIFESTS))
def test_bad_manifest_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    name, text, expected = MANIFESTS[case]
    bad = tmp_path / name
    bad.write_text(text)
    (tmp_path / "node.yaml").write_text(NODE)
    rc, out, err = run_cli(capsys, "simulate", "--output", "json", str(tmp_path / "node.yaml"), str(bad))
    assert rc == 2, (rc, err)
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"error: {bad}{expected}"), err
    assert "Traceback" not in err and "NoneType" not in err


def test_duplicate_pod_across_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(NODE + "---\n" + pod())
    b.write_text(pod("p2") + "---\n" + pod())
    rc, _, err = run_cli(capsys, "simulate", str(a), str(b))
    assert rc == 2
    assert err == (
        f'error: {b}: document 2 (Pod default/p1): pods "p1" already exists (first defined in {a}: document 2)\n'
    )


def test_null_quantity_schedules(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(NODE.replace("cpu: '1'", "cpu: null") + "---\n" + pod(extra=", resources: {requests: {cpu: null}}"))
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", str(f))
    assert rc == 0, err
    assert '"phase":"Scheduled"' in out


@pytest.mark.parametrize("path", ["/dev/zero"])
def test_dev_zero_manifest_and_config(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, path: str
) -> None:
    monkeypatch.setattr("wasmsched.api.manifest.MAX_MANIFEST_BYTES", 1024 * 1024)
    monkeypatch.setattr("wasmsched.config.load.MAX_CONFIG_BYTES", 1024 * 1024)
    rc, _, err = run_cli(capsys, "simulate", path)
    assert (rc, err) == (2, f"error: {path}: file is larger than 1048576 bytes (1 MiB)\n")
    (tmp_path / "node.yaml").write_text(NODE)
    rc, _, err = run_cli(capsys, "simulate", "--config", path, str(tmp_path / "node.yaml"))
    assert (rc, err) == (2, "error: zero: reading config: file is larger than 1048576 bytes (1 MiB)\n")


CONFIGS: dict[str, tuple[str, str]] = {
    "empty": ("", "config is empty: expected a KubeSchedulerConfiguration object"),
    "list": ("- a\n", "config must be a KubeSchedulerConfiguration object, got array"),
    "duplicate-key": (HEADER + "parallelism: 1\nparallelism: 2\n", ':4:1: key "parallelism" already set in map'),
    "score-twice": (
        HEADER + "profiles: [{plugins: {score: {enabled: [{name: ImageLocality}, {name: ImageLocality}]}}}]\n",
        ('profiles[0].plugins.score.enabled[1]: Invalid value: "ImageLocality": plugin "ImageLocality" already '
        'registered as "ScorePlugin"'),
    ),
    "negative-weight": (
        HEADER + "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated,"
        " resources: [{name: cpu, weight: -1}]}}}]}]\n",
        ("profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: -1: resource weight "
        "of cpu not in valid range (0, 100]"),
    ),
    "huge-int": (HEADER + "parallelism: 9" + "9" * 5000 + "\n", "parallelism: Invalid value: cannot unmarshal number"),
}


@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_bad_config_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    text, expected = CONFIGS[case]
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(text)
    (tmp_path / "node.yaml").write_text(NODE)
    rc, _out, err = run_cli(capsys, "simulate", "--config", str(cfg), str(tmp_path / "node.yaml"))
    assert rc == 2, (rc, err)
    assert err.count("\n") == 1, err
    sep = "" if expected.startswith(":") else ": "
    assert err.startswith(f"error: sched.yaml{sep}{expected}"), err
