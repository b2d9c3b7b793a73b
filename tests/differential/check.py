"""Run one case on both sides, compare, and shrink a case that differs to the smallest that still does."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from tests.differential.compare import Comparison, compare
from tests.differential.local import CaseError, run_case
from tests.differential.oracle import Oracle

Objects = list[dict[str, Any]]
Config = dict[str, Any] | None
# Pod and Node fields the shrinker tries to drop, one at a time.
OPTIONAL_POD_SPEC = ("affinity", "tolerations", "topologySpreadConstraints", "nodeSelector", "initContainers",
                     "overhead", "schedulingGates", "priorityClassName", "priority", "preemptionPolicy",
                     "schedulerName", "resources")
OPTIONAL_NODE_FIELDS = (("spec", "taints"), ("spec", "unschedulable"), ("status", "images"))
MAX_SHRINK_RUNS = 400


@dataclass
class Outcome:
    mode: str
    ours: dict[str, Any]
    kube: dict[str, Any]
    comparison: Comparison


# A run mode difference is asked of kube-oracle again this many times: waiting for kube's goroutines is
# by observation, and on a loaded machine a rare run (1 in 20,000 seeds once) ended before a requeue.
ORACLE_RETRIES = 2


def run_both(oracle: Oracle, objects: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None,
             mode: str, swap: str | None = None) -> Outcome:
    """`swap`: run wasmsched with an in-tree plugin replaced by its wasm guest (tests/differential/swap.py);
    kube keeps its own."""
    try:
        ours = run_case(objects, config, mode, swap)
    except CaseError as e:
        ours = {"error": str(e)}
    kube = oracle.ask(objects, config, mode)
    outcome = Outcome(mode, ours, kube, compare(ours, kube))
    for _ in range(ORACLE_RETRIES if mode == "run" else 0):
        if outcome.comparison.equal:
            break
        again = oracle.ask(objects, config, mode)
        if again == kube:
            break  # kube answers the same: the difference stands
        # kube answered differently: the first answer was the oracle's timing, not kube's decision.
        outcome = Outcome(mode, ours, again, compare(ours, again))
        outcome.comparison.oracle_retried = True
        kube = again
    return outcome


def _still_differs(oracle: Oracle, mode: str, swap: str | None) -> Callable[[Objects, Config], bool]:
    def differs(objects: Objects, config: Config) -> bool:
        out = run_both(oracle, objects, config, mode, swap)
        # A smaller case that one side rejects is a different problem, not a smaller instance of this one.
        return not out.comparison.equal and "error" not in out.ours and "error" not in out.kube
    return differs


def _candidates(objects: Objects) -> list[Objects]:
    """Smaller variants: one object less, then one optional field less."""
    out: list[Objects] = [objects[:i] + objects[i + 1:] for i in range(len(objects))]
    for i, obj in enumerate(objects):
        kind = obj.get("kind")
        variants: list[dict[str, Any]] = []
        if kind == "Pod":
            spec = obj.get("spec", {})
            for key in OPTIONAL_POD_SPEC:
                if key in spec:
                    v = copy.deepcopy(obj)
                    del v["spec"][key]
                    variants.append(v)
            for vi in range(len(spec.get("volumes", []))):
                v = copy.deepcopy(obj)
                del v["spec"]["volumes"][vi]
                if not v["spec"]["volumes"]:
                    del v["spec"]["volumes"]
                variants.append(v)
            for ci, c in enumerate(spec.get("containers", [])):
                for key in ("resources", "ports"):
                    if key in c:
                        v = copy.deepcopy(obj)
                        del v["spec"]["containers"][ci][key]
                        variants.append(v)
        elif kind == "Node":
            for section, key in OPTIONAL_NODE_FIELDS:
                if key in obj.get(section, {}):
                    v = copy.deepcopy(obj)
                    del v[section][key]
                    variants.append(v)
        for key in ("labels", "annotations", "ownerReferences"):
            if obj.get("metadata", {}).get(key):
                v = copy.deepcopy(obj)
                del v["metadata"][key]
                variants.append(v)
        out.extend([*objects[:i], v, *objects[i + 1:]] for v in variants)
    return out


def shrink(oracle: Oracle, objects: Objects, config: Config, mode: str, swap: str | None = None
           ) -> tuple[Objects, Config]:
    """Greedy reduction (drop the config, an object, a field) while the case still differs."""
    differs = _still_differs(oracle, mode, swap)
    runs = 0
    if config is not None and differs(objects, None):
        config = None
    changed = True
    while changed and runs < MAX_SHRINK_RUNS:
        changed = False
        for smaller in _candidates(objects):
            runs += 1
            if runs >= MAX_SHRINK_RUNS:
                break
            if differs(smaller, config):
                objects, changed = smaller, True
                break
    return objects, config


def case_yaml(objects: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None) -> str:
    docs = yaml.safe_dump_all([dict(o) for o in objects], sort_keys=False)
    if config is None:
        return docs
    return f"# scheduler.yaml\n{yaml.safe_dump(dict(config), sort_keys=False)}# cluster.yaml\n{docs}"


def report(seed: int | str, outcome: Outcome, shrunk: tuple[Objects, Config] | None,
           shrunk_outcome: Outcome | None) -> str:
    """What a failing seed prints: the differences, the smallest case that still differs, both sides' JSON."""
    lines = [f"seed {seed} ({outcome.mode} mode): {len(outcome.comparison.differences)} difference(s)"]
    lines += ["  " + d for d in outcome.comparison.differences[:20]]
    if shrunk is not None and shrunk_outcome is not None:
        lines.append("shrunk case:")
        lines.append(case_yaml(*shrunk))
        lines.append("differences on the shrunk case:")
        lines += ["  " + d for d in shrunk_outcome.comparison.differences[:20]]
        outcome = shrunk_outcome
    lines.append("wasmsched: " + json.dumps(outcome.ours, sort_keys=True))
    lines.append("kube:      " + json.dumps(outcome.kube, sort_keys=True))
    return "\n".join(lines)


def check(oracle: Oracle, seed: int | str, objects: Objects, config: Config, mode: str,
          shrink_on_difference: bool = True, compared: Callable[[Comparison], None] | None = None,
          swap: str | None = None) -> str | None:
    """None when both sides agree; otherwise the report of the difference (shrunk). `compared` sees
    the comparison (e.g. to count runs that parted ways legitimately)."""
    outcome = run_both(oracle, objects, config, mode, swap)
    if compared is not None:
        compared(outcome.comparison)
    if outcome.comparison.equal:
        return None
    shrunk: tuple[Objects, Config] | None = None
    shrunk_outcome: Outcome | None = None
    if shrink_on_difference and "error" not in outcome.ours and "error" not in outcome.kube:
        shrunk = shrink(oracle, objects, config, mode, swap)
        shrunk_outcome = run_both(oracle, *shrunk, mode, swap)
    return report(seed, outcome, shrunk, shrunk_outcome)
