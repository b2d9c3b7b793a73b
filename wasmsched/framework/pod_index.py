"""Every pod the scheduler's informer holds, for plugins that list pods by namespace and label
(kube's `SharedInformerFactory().Core().V1().Pods().Lister()` with its namespace indexer).

The scheduler's event handlers (scheduler/eventhandlers.py) keep it, for every pod whatever its
scheduler or node, before they act on the change: a PreEnqueue plugin run for a new pod finds that pod
listed, as a lister would. Beside the namespace index, an index by label answers a selector's equality
requirements (`key=value`, `key in (value)`) without matching every pod of the namespace: Coscheduling
lists a PodGroup's pods several times per pod scheduled.
"""

from __future__ import annotations

import threading

from wasmsched.api.labels import DOUBLE_EQUALS, EQUALS, IN, Selector
from wasmsched.api.types import Pod, object_key


class PodIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_namespace: dict[str, dict[str, Pod]] = {}
        # (namespace, label key, label value) -> keys of the pods carrying it
        self._by_label: dict[tuple[str, str, str], set[str]] = {}

    def add(self, pod: Pod) -> None:
        with self._lock:
            self._add_locked(pod)

    def update(self, old: Pod, new: Pod) -> None:
        with self._lock:
            self._delete_locked(old)
            self._add_locked(new)

    def delete(self, pod: Pod) -> None:
        with self._lock:
            self._delete_locked(pod)

    def _add_locked(self, pod: Pod) -> None:
        ns, key = pod.metadata.namespace, object_key(pod)
        pods = self._by_namespace.setdefault(ns, {})
        old = pods.get(key)
        if old is not None:
            self._unindex_labels(ns, key, old)
        pods[key] = pod
        for k, v in pod.metadata.labels.items():
            self._by_label.setdefault((ns, k, v), set()).add(key)

    def _delete_locked(self, pod: Pod) -> None:
        ns, key = pod.metadata.namespace, object_key(pod)
        pods = self._by_namespace.get(ns)
        stored = pods.pop(key, None) if pods is not None else None
        if stored is None:
            return
        self._unindex_labels(ns, key, stored)
        if not pods:
            del self._by_namespace[ns]

    def _unindex_labels(self, ns: str, key: str, pod: Pod) -> None:
        for k, v in pod.metadata.labels.items():
            keys = self._by_label.get((ns, k, v))
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_label[(ns, k, v)]

    def list(self, namespace: str, selector: Selector) -> list[Pod]:
        """The pods of `namespace` ("": every namespace) that `selector` selects, in namespace/name order."""
        with self._lock:
            namespaces = [namespace] if namespace else list(self._by_namespace)
            out: list[Pod] = []
            for ns in namespaces:
                pods = self._by_namespace.get(ns)
                if not pods:
                    continue
                candidates = self._candidates(ns, selector)
                chosen = pods.values() if candidates is None else (pods[k] for k in candidates)
                out.extend(p for p in chosen if selector.matches(p.metadata.labels))
        out.sort(key=object_key)
        return out

    def _candidates(self, ns: str, selector: Selector) -> set[str] | None:
        """The keys of the pods that can match: the smallest set one equality requirement allows (None: no
        such requirement, every pod of the namespace)."""
        best: set[str] | None = None
        for r in selector.requirements:
            if r.operator in (EQUALS, DOUBLE_EQUALS) or (r.operator == IN and len(r.values) == 1):
                keys = self._by_label.get((ns, r.key, r.values[0]), set())
                if best is None or len(keys) < len(best):
                    best = keys
        return set(best) if best is not None else None
