"""Field-by-field comparison of wasmsched's and kube-scheduler's result documents for one case.

Both sides break score ties by the lowest node name, so a run stays in step. Preemption is the one
place kube chooses at random among equally good nodes (pickOneNodeForPreemption); when the two sides
nominate different nodes that kube rates equal, the runs legitimately part ways there and later
attempts are not compared.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ATTEMPT_FIELDS = ("profile", "preFilter", "filter", "scores", "best", "node", "code", "message")
RUN_FIELDS = ("nominatedNode", "victims")


@dataclass
class Comparison:
    differences: list[str] = field(default_factory=list)
    attempts_compared: int = 0
    # Set when the runs parted ways legitimately (equally good preemption nodes): why, at which attempt.
    diverged: str = ""
    # kube-oracle gave a different answer when asked again (see check.ORACLE_RETRIES).
    oracle_retried: bool = False

    @property
    def equal(self) -> bool:
        return not self.differences


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _compare_value(where: str, ours: Any, kube: Any, out: list[str]) -> None:
    if ours == kube:
        return
    if isinstance(ours, Mapping) and isinstance(kube, Mapping):
        for key in sorted(set(ours) | set(kube)):
            if key not in ours:
                out.append(f"{where}[{key}]: wasmsched has none, kube {_show(kube[key])}")
            elif key not in kube:
                out.append(f"{where}[{key}]: wasmsched {_show(ours[key])}, kube has none")
            else:
                _compare_value(f"{where}[{key}]", ours[key], kube[key], out)
        return
    out.append(f"{where}: wasmsched {_show(ours)}, kube {_show(kube)}")


def _normalized(attempt: Mapping[str, Any]) -> Mapping[str, Any]:
    """An attempt without what kube leaves to chance: the order of NodeResourcesFit's reasons (kube lists
    the extended resources in Go map order, which varies from run to run) and of the preemption dry run's
    Filter Errors in the message, and without per-node verdicts
    and scores of a cycle that a Filter Error ended."""
    out = dict(attempt)
    pre_filter = attempt.get("preFilter")
    if attempt.get("code") == "Error" and isinstance(pre_filter, Mapping) and pre_filter.get("code") == "Success":
        # A Filter plugin's Error ends kube's cycle at the node it came from (findNodesThatPassFilters
        # returns it; there is no Diagnosis): the verdicts and scores kube-oracle's explain collects for
        # the other nodes are not kube's, and wasmsched has none. The error itself is compared as the message.
        for key in ("filter", "scores", "best"):
            out.pop(key, None)
    if isinstance(out.get("message"), str):
        out["message"] = _preemption_errors_sorted(out["message"])
    if out.get("filter"):
        out["filter"] = {node: {**st, "reasons": sorted(st["reasons"])}
                         if isinstance(st, Mapping) and st.get("plugin") == "NodeResourcesFit" else st
                         for node, st in attempt["filter"].items()}
    return out


_PREEMPTION_ERRORS = " preemption: ["
# the Filter Errors of an aggregate: each begins with the runner's prefix
_FILTER_ERROR_SPLIT = re.compile(r', (?=running ")')


def _preemption_errors_sorted(message: str) -> str:
    """The Filter Errors of the preemption dry run, which kube aggregates as `[e1, e2]` in the order it
    tried the candidate nodes (NodesForStatusCode: Go map order), sorted."""
    head, sep, rest = message.partition(_PREEMPTION_ERRORS)
    if not sep or not rest.endswith("]"):
        return message
    items = _FILTER_ERROR_SPLIT.split(rest[:-1])
    return head + sep + ", ".join(sorted(items)) + "]" if len(items) > 1 else message


def _before_preemption(message: Any) -> Any:
    return message.split(" preemption: ", 1)[0] if isinstance(message, str) else message


def compare(ours: Mapping[str, Any], kube: Mapping[str, Any]) -> Comparison:
    result = Comparison()
    if "error" in kube or "error" in ours:
        if kube.get("error") is None or ours.get("error") is None:
            result.differences.append(
                f"error: wasmsched {_show(ours.get('error'))}, kube {_show(kube.get('error'))}")
        return result
    run = ours.get("mode") == "run"
    ours_attempts: list[Any] = list(ours.get("attempts", []))
    kube_attempts: list[Any] = list(kube.get("attempts", []))
    diffs = result.differences
    ours_attempts = [_normalized(a) for a in ours_attempts]
    kube_attempts = [_normalized(k) for k in kube_attempts]
    for i, (a, k) in enumerate(zip(ours_attempts, kube_attempts, strict=False)):
        where = f"attempt {i + 1} ({k.get('pod')})"
        if a.get("pod") != k.get("pod"):
            diffs.append(f"attempt {i + 1}: wasmsched tried {a.get('pod')}, kube tried {k.get('pod')}")
            return result
        result.attempts_compared += 1
        ours_nominated, kube_nominated = a.get("nominatedNode"), k.get("nominatedNode")
        parted = run and ours_nominated != kube_nominated and ours_nominated in (k.get("preemptionCandidates") or ())
        for f in ATTEMPT_FIELDS:
            if parted and f == "message":
                # The preemption part names the nominated node and its victims: only the rest must match.
                _compare_value(f"{where} {f}", _before_preemption(a.get(f)), _before_preemption(k.get(f)), diffs)
            else:
                _compare_value(f"{where} {f}", a.get(f), k.get(f), diffs)
        if not run:
            continue
        if parted:
            if not diffs:
                result.diverged = (f"{where}: preemption nominated {ours_nominated} (wasmsched) and {kube_nominated} "
                                   f"(kube), both possible for kube: {k.get('preemptionCandidates')}")
            return result
        for f in RUN_FIELDS:
            _compare_value(f"{where} {f}", a.get(f), k.get(f), diffs)
        if diffs:
            return result
    if len(ours_attempts) != len(kube_attempts):
        diffs.append(f"attempts: wasmsched made {len(ours_attempts)}, kube {len(kube_attempts)}")
        return result
    if run:
        _compare_value("final", ours.get("final") or {}, kube.get("final") or {}, diffs)
    return result
