"""The API calls the scheduler dispatches (kube 1.37's pkg/scheduler/framework/api_calls): a pod's
binding and a pod's status patch, with their relevances (a binding makes a pending status patch of
the same pod obsolete)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from wasmsched.api.types import Pod
from wasmsched.framework.interface import NominatingInfo, NominatingMode, PodCondition

POD_STATUS_PATCH = "pod_status_patch"
POD_BINDING = "pod_binding"

# api_calls.go's Relevances.
RELEVANCES = {POD_STATUS_PATCH: 1, POD_BINDING: 2}


class PodWriter(Protocol):
    """The two requests behind the calls (kube/client_cluster.py makes them)."""

    def post_binding(self, namespace: str, name: str, uid: str, node_name: str) -> None: ...

    def patch_pod_status(self, namespace: str, name: str, uid: str, status: dict[str, object]) -> None: ...


def call_uid(pod: Pod) -> str:
    """The object a call is for: the pod's UID (namespace/name for a pod that has none, in tests)."""
    meta = pod.metadata
    return meta.uid or f"{meta.namespace}/{meta.name}"


class PodBindingCall:
    """pod_binding.go: POST pods/binding; a later binding of the same pod simply replaces it."""

    call_type = POD_BINDING

    def __init__(self, writer: PodWriter, pod: Pod, node_name: str) -> None:
        self.writer = writer
        self.namespace, self.name, self.pod_uid = pod.metadata.namespace, pod.metadata.name, pod.metadata.uid
        self.node_name = node_name
        self.uid = call_uid(pod)

    def execute(self) -> None:
        self.writer.post_binding(self.namespace, self.name, self.pod_uid, self.node_name)

    def merge(self, old: object) -> None:
        pass

    def is_noop(self) -> bool:
        return False


@dataclass(frozen=True)
class _CurrentCondition:
    status: str
    reason: str
    message: str


class PodStatusPatchCall:
    """pod_status_patch.go: the pod's conditions and nominatedNodeName, written in one strategic-merge
    patch of pods/status, computed against the pod's status when the call was made; a call that changes
    nothing is not made."""

    call_type = POD_STATUS_PATCH

    def __init__(self, writer: PodWriter, pod: Pod, conditions: list[PodCondition],
                 nominating: NominatingInfo | None, now: str) -> None:
        self.writer = writer
        meta = pod.metadata
        self.namespace, self.name, self.pod_uid = meta.namespace, meta.name, meta.uid
        self.uid = call_uid(pod)
        self.generation = meta.generation
        self.conditions = list(conditions)
        self.nominating = nominating
        self.now = now
        # What the status was: only what a patch is computed from is kept (kube deep-copies the status).
        self.current = {c.type: _CurrentCondition(c.status, c.reason, c.message) for c in pod.status.conditions}
        self.nominated_node_name = pod.status.nominatedNodeName

    def _nominated_needs_update(self) -> bool:
        n = self.nominating
        return n is not None and n.mode == NominatingMode.OVERRIDE and \
            self.nominated_node_name != n.nominated_node_name

    def _condition_needs_update(self, c: PodCondition) -> bool:
        old = self.current.get(c.type)
        return old is None or (old.status, old.reason, old.message) != (c.status, c.reason, c.message)

    def is_noop(self) -> bool:
        return not self._nominated_needs_update() and not any(self._condition_needs_update(c)
                                                              for c in self.conditions)

    def merge(self, old: object) -> None:
        """The old call's nominatedNodeName when this one does not set one, and its conditions of the
        types this one does not set."""
        if not isinstance(old, PodStatusPatchCall):
            raise TypeError(f"call of type {type(old).__name__} is not a PodStatusPatchCall")
        mine = self.nominating
        if (mine is None or mine.mode != NominatingMode.OVERRIDE) and old.nominating is not None \
                and old.nominating.mode == NominatingMode.OVERRIDE:
            self.nominating = old.nominating
        types = {c.type for c in self.conditions}
        self.conditions.extend(c for c in old.conditions if c.type not in types)

    def patch(self) -> dict[str, object]:
        """The status part of the patch (empty: nothing to write). lastTransitionTime moves only when a
        condition's status changes (podutil.UpdatePodCondition)."""
        out: dict[str, object] = {}
        conds = []
        for c in self.conditions:
            if not self._condition_needs_update(c):
                continue
            d: dict[str, object] = {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message,
                                    "lastProbeTime": None}
            old = self.current.get(c.type)
            if old is None or old.status != c.status:
                d["lastTransitionTime"] = self.now
            if self.generation:
                d["observedGeneration"] = self.generation
            conds.append(d)
        if conds:
            out["conditions"] = conds
        if self._nominated_needs_update():
            assert self.nominating is not None
            out["nominatedNodeName"] = self.nominating.nominated_node_name or None
        return out

    def execute(self) -> None:
        status = self.patch()
        if status:
            self.writer.patch_pod_status(self.namespace, self.name, self.pod_uid, status)


__all__ = ["POD_BINDING", "POD_STATUS_PATCH", "RELEVANCES", "PodBindingCall", "PodStatusPatchCall", "PodWriter",
           "call_uid"]
