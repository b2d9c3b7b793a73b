"""What the API server changes in a pod it creates (pkg/registry/core/pod/strategy.go PrepareForCreate):
the label keys of affinity terms and spread constraints are merged into their label selectors, with the
values of the pod's own labels. kube-scheduler 1.37 reads pod affinity only through the merged selector,
so an embedded cluster must merge as the API server does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from wasmsched.api.types import Pod


def _apply_label_keys(selector: Any, keys: Iterable[str], operator: str, labels: Mapping[str, str]) -> None:
    """applyLabelKeysToLabelSelector."""
    for key in keys:
        if key in labels:
            selector.matchExpressions.add(key=key, operator=operator, values=[labels[key]])


def _affinity_terms(pod: Pod) -> Iterable[Any]:
    aff = pod.spec.affinity
    for field in ("podAffinity", "podAntiAffinity"):
        if not aff.HasField(field):
            continue
        group = getattr(aff, field)
        yield from (w.podAffinityTerm for w in group.preferredDuringSchedulingIgnoredDuringExecution)
        yield from group.requiredDuringSchedulingIgnoredDuringExecution


def prepare_pod_for_create(pod: Pod) -> None:
    """mutatePodAffinity and mutateTopologySpreadConstraints (their feature gates are on in 1.37). A term
    or constraint without a label selector matches nothing, and is left so."""
    labels = pod.metadata.labels
    if pod.spec.HasField("affinity"):
        for term in _affinity_terms(pod):
            if (term.matchLabelKeys or term.mismatchLabelKeys) and term.HasField("labelSelector"):
                _apply_label_keys(term.labelSelector, term.matchLabelKeys, "In", labels)
                _apply_label_keys(term.labelSelector, term.mismatchLabelKeys, "NotIn", labels)
    for c in pod.spec.topologySpreadConstraints:
        if c.matchLabelKeys and c.HasField("labelSelector"):
            _apply_label_keys(c.labelSelector, c.matchLabelKeys, "In", labels)
