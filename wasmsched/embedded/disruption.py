"""PodDisruptionBudget status as the disruption controller computes it (pkg/controller/disruption).

Manifests carry a PDB's spec; its status (how many disruptions are allowed now) is the controller's
job in a real cluster. The embedded cluster has no controllers, so it derives the status from the
running pods when preemption asks for PDBs. A PDB whose manifest already has a status keeps it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from wasmsched.api.labels import compile_label_selector


def scaled_value(v: Any, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent with roundUp, as the disruption controller calls it."""
    if v.type == 1:
        text = v.strVal
        if not text.endswith("%"):
            raise ValueError(f"invalid value for IntOrString: invalid value {text!r}")
        return math.ceil(int(text[:-1]) * total / 100)
    return int(v.intVal)


def with_status(pdb: Any, pods: Iterable[Any]) -> Any:
    """A copy of `pdb` with currentHealthy/desiredHealthy/expectedPods/disruptionsAllowed filled in."""
    if pdb.HasField("status") and pdb.status.ByteSize() > 0:
        return pdb
    out = type(pdb)()
    out.CopyFrom(pdb)
    sel = compile_label_selector(pdb.spec.selector if pdb.spec.HasField("selector") else None)
    matching = [
        p for p in pods
        if p.metadata.namespace == pdb.metadata.namespace and p.spec.nodeName
        and not p.metadata.HasField("deletionTimestamp") and sel.matches(p.metadata.labels)
    ]
    expected = len(matching)
    if pdb.spec.HasField("maxUnavailable"):
        desired = max(0, expected - scaled_value(pdb.spec.maxUnavailable, expected))
    elif pdb.spec.HasField("minAvailable"):
        desired = scaled_value(pdb.spec.minAvailable, expected)
    else:
        desired = expected
    healthy = expected  # the embedded cluster's running pods are all ready
    out.status.expectedPods = expected
    out.status.currentHealthy = healthy
    out.status.desiredHealthy = desired
    out.status.disruptionsAllowed = max(0, healthy - desired)
    return out
