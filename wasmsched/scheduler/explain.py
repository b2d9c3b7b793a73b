"""The --explain data of one scheduling attempt as JSON: the shape `kube-oracle` prints for kube-scheduler
(docs/compatibility.md), so the two can be compared field by field."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.status import Code, Status
from wasmsched.scheduler.algorithm import CycleExplain


def status_document(st: Status | None) -> dict[str, Any]:
    if st is None:
        return {"code": str(Code.SUCCESS), "plugin": "", "reasons": []}
    return {"code": str(st.code), "plugin": st.plugin or "", "reasons": list(st.reasons)}


def explain_document(ex: CycleExplain | None) -> dict[str, Any]:
    """preFilter, filter (every node: "ok" or its status), scores (per scored node: plugin -> weighted
    score, and "total") and best (the nodes sharing the highest total)."""
    if ex is None:
        return {"preFilter": None, "filter": {}, "scores": {}, "best": []}
    pre = status_document(ex.pre_filter)
    pre["nodeNames"] = None if ex.pre_filter_nodes is None else sorted(ex.pre_filter_nodes)
    filt: dict[str, Any] = {node: "ok" if st is None else status_document(st) for node, st in ex.filter.items()}
    scores: dict[str, Any] = {}
    for nps in ex.scores:
        entry: dict[str, int] = {ps.name: ps.score for ps in nps.scores}
        entry["total"] = nps.total_score
        scores[nps.name] = entry
    return {"preFilter": pre, "filter": filt, "scores": scores, "best": ex.best()}
