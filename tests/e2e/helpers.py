"""Helpers for the end-to-end `wasmsched simulate` tests: run the CLI in-process, build kube's messages."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from wasmsched.cli.main import main

SCENARIOS = Path(__file__).parent / "scenarios"

# DefaultPreemption's per-node reasons (pkg/scheduler/framework/preemption/preemption.go and
# pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go).
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Runs `wasmsched ARGV...` in this process; returns (exit code, stdout, stderr)."""
    capsys.readouterr()  # drop anything captured before
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def scenario_args(name: str) -> list[str]:
    """The PATH (and --config when the scenario has a scheduler.yaml) for a scenario directory."""
    d = SCENARIOS / name
    args: list[str] = []
    cfg = d / "scheduler.yaml"
    if cfg.exists():
        args += ["--config", str(cfg)]
    args.append(str(d / "cluster.yaml"))
    return args


def simulate_json(capsys: pytest.CaptureFixture[str], name: str, *extra: str) -> dict[str, Any]:
    rc, out, err = run_cli(capsys, "simulate", "--output", "json", *extra, *scenario_args(name))
    assert rc == 0, f"exit code {rc}, stderr:\n{err}"
    doc: dict[str, Any] = json.loads(out)
    return doc


def pods_by_name(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in doc["pods"]}


def histogram(reasons: Mapping[str, int]) -> str:
    """sortReasonsHistogram of FitError.Error(): "<count> <reason>" sorted as strings, joined by ", "."""
    return ", ".join(sorted(f"{n} {r}" for r, n in reasons.items()))


def fit_message(num_nodes: int, filter_reasons: Mapping[str, int], preemption: Mapping[str, int]) -> str:
    """kube-scheduler's FailedScheduling text for a pod that failed Filter and then DefaultPreemption.

    pkg/scheduler/framework/types.go, FitError.Error(): the filter histogram is appended with
    " %v." and the PostFilter message with " %v" (no period of its own since Kubernetes 1.30, so
    the message ends with a single period). DefaultPreemption prefixes its message with
    "preemption: " and the message itself is the FitError text of the preemption dry run.
    """
    inner = f"0/{num_nodes} nodes are available: {histogram(preemption)}."
    return f"0/{num_nodes} nodes are available: {histogram(filter_reasons)}. preemption: {inner}"


@dataclass(frozen=True)
class Unsched:
    """Expected: the pod stays pending with exactly this FailedScheduling message."""

    message: str


@dataclass(frozen=True)
class Preempted:
    """Expected: a running pod evicted as a victim on this node."""

    node: str


@dataclass(frozen=True)
class Running:
    """Expected: a pod bound in the input (spec.nodeName), reported as Running on its node."""

    node: str


@dataclass(frozen=True)
class Preemptor:
    """Expected: the pod is scheduled on this node after preempting (two attempts)."""

    node: str


Outcome = str | Unsched | Preempted | Preemptor | Running


def assert_outcome(doc: Mapping[str, Any], expected: Mapping[str, Outcome], namespace: str = "default") -> None:
    """Checks every reported pod, its events, and the summary against `expected`.

    A str value is the node the pod is scheduled on in its first attempt.
    """
    pods = pods_by_name(doc)
    assert set(pods) == set(expected), f"reported pods {sorted(pods)} != expected {sorted(expected)}"
    events = doc["events"]
    for name, want in expected.items():
        p = pods[name]
        key = f"{namespace}/{name}"
        assert p["namespace"] == namespace
        mine = [e for e in events if e["regarding"] == key]
        if isinstance(want, str | Preemptor):
            node = want if isinstance(want, str) else want.node
            assert (p["phase"], p["node"], p["message"]) == ("Scheduled", node, ""), p
            assert p["attempts"] == (1 if isinstance(want, str) else 2), p
            scheduled = [e for e in mine if e["reason"] == "Scheduled"]
            assert scheduled == [{"type": "Normal", "reason": "Scheduled", "regarding": key,
                                  "message": f"Successfully assigned {key} to {node}"}]
        elif isinstance(want, Running):
            assert (p["phase"], p["node"], p["message"], p["attempts"]) == ("Running", want.node, "", 0), p
            assert not mine, mine
        elif isinstance(want, Unsched):
            assert p["phase"] == "Unschedulable", p
            assert p["node"] is None
            assert p["nominatedNode"] is None
            assert p["attempts"] >= 1
            assert p["message"] == want.message
            failed = [e for e in mine if e["reason"] == "FailedScheduling"]
            assert failed, f"no FailedScheduling event for {key}"
            assert failed[-1] == {"type": "Warning", "reason": "FailedScheduling", "regarding": key,
                                  "message": want.message}
            assert not [e for e in mine if e["reason"] == "Scheduled"]
        else:
            assert p["phase"] == "Preempted", p
            assert p["node"] is None
            preempted = [e for e in mine if e["reason"] == "Preempted"]
            assert len(preempted) == 1, mine
            ev = preempted[0]
            assert ev["type"] == "Normal"
            # preemption.go: Eventf(victim, preemptor, Normal, "Preempted", "Preempting",
            #                       "Preempted by pod %v on node %v", preemptor.UID, node)
            prefix, suffix = "Preempted by pod ", f" on node {want.node}"
            assert ev["message"].startswith(prefix) and ev["message"].endswith(suffix), ev
            assert len(ev["message"]) > len(prefix) + len(suffix), ev
    summary = doc["summary"]
    phases = [p["phase"] for p in doc["pods"]]
    assert summary["scheduled"] == phases.count("Scheduled")
    assert summary["unschedulable"] == phases.count("Unschedulable")
    assert summary["preempted"] == phases.count("Preempted")
    assert summary["running"] == phases.count("Running")
