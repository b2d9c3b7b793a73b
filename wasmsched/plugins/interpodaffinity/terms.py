"""The incoming pod's affinity terms with their namespaceSelector resolved.

kube unrolls a non-empty namespaceSelector of the incoming pod's terms into the term's
namespaces by listing Namespaces (mergeAffinityTermNamespacesIfNotEmpty). We have no namespace
lister, only the labels of one namespace, so the selector is evaluated lazily against the labels
of each candidate pod's namespace, memoised for the cycle: the same set of namespaces matches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from wasmsched.api.types import Pod
from wasmsched.framework.types import AffinityTerm, PodInfo

_NS_NONE = 0  # no namespaceSelector: only the listed namespaces
_NS_ALL = 1  # an empty namespaceSelector: every namespace
_NS_SELECT = 2  # a selector over namespace labels

NamespaceLabelsFn = Callable[[str], "Mapping[str, str] | None"]


class ResolvedTerm:
    __slots__ = ("_mode", "_ns_labels", "term", "topology_key", "weight")

    def __init__(self, term: AffinityTerm, mode: int, ns_labels: NamespaceLabelsFn, weight: int = 0) -> None:
        self.term = term
        self.topology_key = term.topology_key
        self.weight = weight
        self._mode = mode
        self._ns_labels = ns_labels

    def matches(self, pod: Pod) -> bool:
        t = self.term
        ns = pod.metadata.namespace
        if ns in t.namespaces or self._mode == _NS_ALL:
            return t.selector.matches(pod.metadata.labels)
        if self._mode == _NS_SELECT:
            labels = self._ns_labels(ns)
            if labels is not None and t.namespace_selector.matches(labels):
                return t.selector.matches(pod.metadata.labels)
        return False


def pod_matches_all_affinity_terms(terms: Sequence[ResolvedTerm], pod: Pod) -> bool:
    """True iff there are terms and the pod matches all of them."""
    if not terms:
        return False
    return all(t.matches(pod) for t in terms)


def _mode(proto_term: Any) -> int:
    if not proto_term.HasField("namespaceSelector"):
        return _NS_NONE
    sel = proto_term.namespaceSelector
    if len(sel.matchLabels) == 0 and len(sel.matchExpressions) == 0:
        return _NS_ALL
    return _NS_SELECT


class NamespaceLabelCache:
    """Namespace labels looked up through the cluster client once per namespace per cycle."""

    __slots__ = ("_cache", "_client")

    def __init__(self, client: Any) -> None:
        self._client = client
        self._cache: dict[str, Mapping[str, str] | None] = {}

    def get(self, ns: str) -> Mapping[str, str] | None:
        try:
            return self._cache[ns]
        except KeyError:
            labels = self._client.get_namespace_labels(ns) if self._client is not None else None
            self._cache[ns] = labels
            return labels


def _proto_terms(pod: Pod, kind: str, required: bool) -> list[Any]:
    if not pod.spec.HasField("affinity") or not pod.spec.affinity.HasField(kind):
        return []
    a = getattr(pod.spec.affinity, kind)
    if required:
        return list(a.requiredDuringSchedulingIgnoredDuringExecution)
    return [w.podAffinityTerm for w in a.preferredDuringSchedulingIgnoredDuringExecution]


def resolve_required(pi: PodInfo, cache: NamespaceLabelCache) -> tuple[list[ResolvedTerm], list[ResolvedTerm]]:
    """(affinity, anti-affinity) required terms of the incoming pod."""
    get = cache.get
    aff = [ResolvedTerm(t, _mode(p), get)
           for t, p in zip(pi.required_affinity_terms, _proto_terms(pi.pod, "podAffinity", True), strict=True)]
    anti = [ResolvedTerm(t, _mode(p), get)
            for t, p in zip(pi.required_anti_affinity_terms, _proto_terms(pi.pod, "podAntiAffinity", True),
                            strict=True)]
    return aff, anti


def resolve_preferred(pi: PodInfo, cache: NamespaceLabelCache) -> tuple[list[ResolvedTerm], list[ResolvedTerm]]:
    """(affinity, anti-affinity) preferred terms of the incoming pod, with weights."""
    get = cache.get
    aff = [ResolvedTerm(w.term, _mode(p), get, w.weight)
           for w, p in zip(pi.preferred_affinity_terms, _proto_terms(pi.pod, "podAffinity", False), strict=True)]
    anti = [ResolvedTerm(w.term, _mode(p), get, w.weight)
            for w, p in zip(pi.preferred_anti_affinity_terms, _proto_terms(pi.pod, "podAntiAffinity", False),
                            strict=True)]
    return aff, anti
