"""The embedded cluster: an in-memory object store with resourceVersions and watch events.

It plays the API server and the informers for `simulate`: writes bump resourceVersion and are
delivered to watchers in order, synchronously, as add/update/delete. It also applies the pieces of
API-server admission a scheduler relies on (pod priority from PriorityClass, requests defaulted
from limits, the default scheduler name).
"""

from __future__ import annotations

import builtins
import itertools
import math
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from wasmsched.api.errors import REASON_ALREADY_EXISTS, REASON_CONFLICT, REASON_FORBIDDEN, REASON_NOT_FOUND, ApiError
from wasmsched.api.podstrategy import prepare_pod_for_create
from wasmsched.api.types import Pod, PriorityClass, object_key
from wasmsched.api.validation.scheduling import SYSTEM_PRIORITY_CLASS_DESCRIPTIONS, SYSTEM_PRIORITY_CLASSES
from wasmsched.embedded.disruption import with_status
from wasmsched.framework.interface import NominatingInfo, NominatingMode, PodCondition

KIND_POD = "Pod"
KIND_NODE = "Node"

AddFn = Callable[[Any], None]
UpdateFn = Callable[[Any, Any], None]
DeleteFn = Callable[[Any], None]


# The embedded cluster refuses a write with the error kube-apiserver would answer (api/errors.py's
# ApiError, its HTTP code and Status reason), so is_not_found/is_conflict/... judge both clusters alike.


class NotFoundError(ApiError):
    """404 NotFound: no such object."""

    def __init__(self, message: str) -> None:
        super().__init__(404, REASON_NOT_FOUND, message)


class ConflictError(ApiError):
    """409: the write conflicts with the stored object (reason Conflict: a stale resourceVersion, a pod
    bound already), or, as AlreadyExistsError, the object exists already; `obj` is the refused object,
    if any."""

    def __init__(self, message: str, obj: Any = None, reason: str = REASON_CONFLICT) -> None:
        super().__init__(409, reason, message)
        self.obj = obj


class AlreadyExistsError(ConflictError):
    """409 AlreadyExists: a create of an object that exists (is_already_exists, not is_conflict)."""

    def __init__(self, message: str, obj: Any = None) -> None:
        super().__init__(message, obj, REASON_ALREADY_EXISTS)


# A PriorityClass's preemptionPolicy when it gives none (API defaulting), and a pod's without a class.
_PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


class AdmissionError(ApiError):
    """403 Forbidden: an admission plugin refuses the object (admission.NewForbidden, as the Priority
    plugin answers); `obj` is the object and `field` the field refused (when one is), for callers to say
    where it came from."""

    def __init__(self, message: str, obj: Any = None, field: str = "") -> None:
        super().__init__(403, REASON_FORBIDDEN, message)
        self.obj = obj
        self.field = field


@dataclass
class RecordedEvent:
    type: str
    reason: str
    action: str
    regarding: str
    regarding_kind: str
    message: str
    related: str = ""
    reporting_controller: str = "default-scheduler"


@dataclass
class _Watch:
    kind: str
    on_add: AddFn | None
    on_update: UpdateFn | None
    on_delete: DeleteFn | None


def _kind_of(obj: Message) -> str:
    return obj.DESCRIPTOR.name


class MemoryCluster:
    # Watchers and after-write hooks run inside the write (framework.interface.ClusterClient).
    settles_synchronously = True

    def __init__(self, start_pods_on_bind: Callable[[], float] | None = None) -> None:
        """`start_pods_on_bind`: a clock; when given, a binding also sets the pod's status.startTime, as a
        kubelet that starts the pod at once would (differential tests: kube-oracle binds the same way)."""
        self._start_pods_on_bind = start_pods_on_bind
        # One re-entrant lock serialises writes and their delivery, so watchers see one order.
        self._lock = threading.RLock()
        self._objects: dict[str, dict[str, Any]] = {}
        self._rv = itertools.count(1)
        self._watches: list[_Watch] = []
        # Called once the outermost write (with its watch deliveries) is done: controllers that react to
        # writes (embedded/pv_provisioner.py) write from there, so every watcher sees events in order.
        self._after_write: list[Callable[[], None]] = []
        self._write_depth = 0
        self._running_after_write = False
        self.events: list[RecordedEvent] = []
        self.bindings = 0  # pods bound so far (the simulator's measure of progress)
        self.deleted_pods: dict[str, str] = {}

    # ----- store ------------------------------------------------------------------------------

    def watch(self, kind: str, on_add: AddFn | None = None, on_update: UpdateFn | None = None,
              on_delete: DeleteFn | None = None) -> None:
        with self._lock:
            self._watches.append(_Watch(kind, on_add, on_update, on_delete))
            for obj in list(self._objects.get(kind, {}).values()):
                if on_add is not None:
                    on_add(obj)

    def add_after_write_hook(self, fn: Callable[[], None]) -> None:
        with self._lock:
            self._after_write.append(fn)

    def _begin_write(self) -> None:
        self._write_depth += 1

    def _end_write(self) -> None:
        self._write_depth -= 1
        if self._write_depth or self._running_after_write or not self._after_write:
            return
        self._running_after_write = True
        try:
            for fn in list(self._after_write):
                fn()
        finally:
            self._running_after_write = False

    def list(self, kind: str) -> list[Any]:
        with self._lock:
            return list(self._objects.get(kind, {}).values())

    def get(self, kind: str, key: str) -> Any | None:
        with self._lock:
            return self._objects.get(kind, {}).get(key)

    def create(self, obj: Any) -> Any:
        with self._lock:
            self._begin_write()
            try:
                return self._create_locked(obj)
            finally:
                self._end_write()

    def _create_locked(self, obj: Any) -> Any:
        kind = _kind_of(obj)
        key = object_key(obj)
        store = self._objects.setdefault(kind, {})
        if key in store:
            raise AlreadyExistsError(f'{kind.lower()}s "{key}" already exists', obj)
        if kind == KIND_POD:
            self._admit_pod(obj)
        obj.metadata.resourceVersion = str(next(self._rv))
        store[key] = obj
        for w in self._watches:
            if w.kind == kind and w.on_add is not None:
                w.on_add(obj)
        return obj

    def update(self, obj: Any) -> Any:
        with self._lock:
            self._begin_write()
            try:
                return self._update_locked(obj)
            finally:
                self._end_write()

    def _update_locked(self, obj: Any) -> Any:
        kind = _kind_of(obj)
        key = object_key(obj)
        store = self._objects.get(kind, {})
        old = store.get(key)
        if old is None:
            raise NotFoundError(f'{kind.lower()}s "{key}" not found')
        obj.metadata.resourceVersion = str(next(self._rv))
        store[key] = obj
        for w in self._watches:
            if w.kind == kind and w.on_update is not None:
                w.on_update(old, obj)
        return obj

    def delete(self, kind: str, key: str) -> Any:
        with self._lock:
            self._begin_write()
            try:
                return self._delete_locked(kind, key)
            finally:
                self._end_write()

    def _delete_locked(self, kind: str, key: str) -> Any:
        store = self._objects.get(kind, {})
        old = store.pop(key, None)
        if old is None:
            raise NotFoundError(f'{kind.lower()}s "{key}" not found')
        for w in self._watches:
            if w.kind == kind and w.on_delete is not None:
                w.on_delete(old)
        return old

    def _mutate_pod(self, pod: Pod, fn: Callable[[Pod], None]) -> Pod:
        with self._lock:
            cur = self.get(KIND_POD, object_key(pod))
            if cur is None:
                raise NotFoundError(f'pods "{pod.metadata.name}" not found')
            new = Pod()
            new.CopyFrom(cur)
            fn(new)
            return self.update(new)  # type: ignore[no-any-return]

    # ----- admission --------------------------------------------------------------------------

    def _admit_pod(self, pod: Pod) -> None:
        prepare_pod_for_create(pod)
        if not pod.spec.schedulerName:
            pod.spec.schedulerName = "default-scheduler"
        for c in list(pod.spec.initContainers) + list(pod.spec.containers):
            # API defaulting: a limit without a request makes the request equal the limit.
            for name, q in c.resources.limits.items():
                if name not in c.resources.requests:
                    c.resources.requests[name].CopyFrom(q)
        self._admit_priority(pod)

    def _admit_priority(self, pod: Pod) -> None:
        """The Priority admission plugin on create: the priority and preemption policy come from the pod's
        PriorityClass, or the global default one (the lowest if several), or 0 and PreemptLowerPriority; a
        pod that gives a different priority or policy itself is forbidden."""
        classes = self._objects.get("PriorityClass", {})
        name = pod.spec.priorityClassName
        if name:
            pc = classes.get(name)
            if pc is None:
                raise AdmissionError(
                    f'pods "{pod.metadata.name}" is forbidden: no PriorityClass with name {name} was found', pod,
                    "spec.priorityClassName")
            priority, policy = pc.value, pc.preemptionPolicy or _PREEMPT_LOWER_PRIORITY
        else:
            defaults = [c for c in classes.values() if c.globalDefault]
            if defaults:
                pc = min(defaults, key=lambda c: c.value)
                name, priority, policy = pc.metadata.name, pc.value, pc.preemptionPolicy or _PREEMPT_LOWER_PRIORITY
            else:
                priority, policy = 0, _PREEMPT_LOWER_PRIORITY
        pod.spec.priorityClassName = name
        if pod.spec.HasField("priority") and pod.spec.priority != priority:
            raise AdmissionError(
                f'pods "{pod.metadata.name}" is forbidden: the integer value of priority ({pod.spec.priority}) must '
                f"not be provided in pod spec; priority admission controller computed {priority} from the given "
                "PriorityClass name", pod, "spec.priority")
        pod.spec.priority = priority
        if pod.spec.HasField("preemptionPolicy") and pod.spec.preemptionPolicy != policy:
            raise AdmissionError(
                f'pods "{pod.metadata.name}" is forbidden: the string value of PreemptionPolicy '
                f"({pod.spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller "
                f"computed {policy} from the given PriorityClass name", pod, "spec.preemptionPolicy")
        pod.spec.preemptionPolicy = policy

    # ----- ClusterClient (what the scheduler writes) ------------------------------------------

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return self.get(KIND_POD, f"{namespace}/{name}")  # type: ignore[no-any-return]

    def bind(self, pod: Pod, node_name: str) -> None:
        with self._lock:
            cur = self.get_pod(pod.metadata.namespace, pod.metadata.name)
            if cur is None or (pod.metadata.uid and cur.metadata.uid != pod.metadata.uid):
                raise NotFoundError(f'pods "{pod.metadata.name}" not found')
            if cur.spec.nodeName:
                raise ConflictError(f'pod {pod.metadata.name} is already assigned to node "{cur.spec.nodeName}"')
            if self.get(KIND_NODE, node_name) is None:
                raise NotFoundError(f'nodes "{node_name}" not found')

            started = self._start_pods_on_bind() if self._start_pods_on_bind is not None else None

            def set_node(p: Pod) -> None:
                p.spec.nodeName = node_name
                # The API server clears the nomination when it binds (ClearingNominatedNodeNameAfterBinding,
                # on since 1.35).
                p.status.nominatedNodeName = ""
                _set_condition(p, "PodScheduled", "True", "", "")
                if started is not None:
                    seconds = math.floor(started)
                    p.status.startTime.seconds = seconds
                    p.status.startTime.nanos = min(round((started - seconds) * 1e9), 999_999_999)

            self._mutate_pod(cur, set_node)
            self.bindings += 1

    def delete_pod(self, pod: Pod, reason: str) -> None:
        with self._lock:
            key = object_key(pod)
            if self.get(KIND_POD, key) is None:
                return
            self.deleted_pods[key] = reason
            self.delete(KIND_POD, key)

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        with self._lock:
            cur = self.get_pod(pod.metadata.namespace, pod.metadata.name)
            # Like a status patch that changes nothing: no write, no watch event.
            if cur is None or cur.status.nominatedNodeName == node_name:
                return

            def set_nnn(p: Pod) -> None:
                p.status.nominatedNodeName = node_name

            self._mutate_pod(cur, set_nnn)

    def set_pod_condition(self, pod: Pod, ctype: str, status: str, reason: str, message: str) -> None:
        with self._lock:
            cur = self.get_pod(pod.metadata.namespace, pod.metadata.name)
            if cur is None or any(
                (c.type, c.status, c.reason, c.message) == (ctype, status, reason, message)
                for c in cur.status.conditions
            ):
                return
            self._mutate_pod(cur, lambda p: _set_condition(p, ctype, status, reason, message))

    def update_pod_status(self, pod: Pod, condition: PodCondition | None, nominating: NominatingInfo | None) -> None:
        if condition is not None:
            self.set_pod_condition(pod, condition.type, condition.status, condition.reason, condition.message)
        if nominating is not None and nominating.mode == NominatingMode.OVERRIDE:
            self.set_nominated_node_name(pod, nominating.nominated_node_name)

    def list_pod_disruption_budgets(self) -> builtins.list[Any]:
        with self._lock:
            pods = self.list(KIND_POD)
            return [with_status(pdb, pods) for pdb in self.list("PodDisruptionBudget")]

    def get_namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        ns = self.get("Namespace", namespace)
        if ns is None:
            # Namespaces not declared in the manifests exist implicitly, with the label the API server sets.
            return {"kubernetes.io/metadata.name": namespace}
        labels = dict(ns.metadata.labels)
        labels.setdefault("kubernetes.io/metadata.name", namespace)
        return labels

    def list_in_namespace(self, kind: str, namespace: str) -> builtins.list[Any]:
        # Called for every pod PodTopologySpread defaults: with no object of the kind, skip the lock.
        if not self._objects.get(kind):
            return []
        with self._lock:
            return [o for o in self._objects.get(kind, {}).values() if o.metadata.namespace == namespace]

    def get_object(self, kind: str, key: str) -> Any | None:
        return self.get(kind, key)

    def list_objects(self, kind: str) -> builtins.list[Any]:
        return self.list(kind)

    def update_object(self, obj: Any, subresource: str = "") -> Any:
        """An update as the API server does it: refused when the object's resourceVersion is stale;
        a "status" write keeps the stored spec, a main-resource write keeps the stored status."""
        with self._lock:
            kind = _kind_of(obj)
            cur = self.get(kind, object_key(obj))
            if cur is None:
                raise NotFoundError(f'{kind.lower()}s "{object_key(obj)}" not found')
            rv = obj.metadata.resourceVersion
            if rv and rv != cur.metadata.resourceVersion:
                raise ConflictError(
                    f'Operation cannot be fulfilled on {kind.lower()}s "{object_key(obj)}": the object has been '
                    "modified; please apply your changes to the latest version and try again", obj)
            has_status = "status" in obj.DESCRIPTOR.fields_by_name
            new = type(obj)()
            if subresource == "status":
                new.CopyFrom(cur)
                new.status.CopyFrom(obj.status)
            else:
                new.CopyFrom(obj)
                if has_status:
                    new.status.CopyFrom(cur.status)
            return self.update(new)

    # ----- EventRecorder ----------------------------------------------------------------------

    def eventf(self, regarding: Any, related: Any, eventtype: str, reason: str, action: str, note: str) -> None:
        with self._lock:
            self.events.append(RecordedEvent(
                type=eventtype, reason=reason, action=action,
                regarding=_ref(regarding), regarding_kind=_ref_kind(regarding),
                message=note, related=_ref(related) if related is not None else "",
            ))


def system_priority_classes() -> builtins.list[PriorityClass]:
    """The PriorityClasses kube-apiserver creates at start-up (SystemPriorityClasses)."""
    out = []
    for name, (value, global_default) in SYSTEM_PRIORITY_CLASSES.items():
        pc = PriorityClass(value=value, globalDefault=global_default,
                           description=SYSTEM_PRIORITY_CLASS_DESCRIPTIONS[name])
        pc.metadata.name = name
        pc.metadata.uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"priorityclasses.scheduling.k8s.io/{name}"))
        out.append(pc)
    return out


def _set_condition(pod: Pod, ctype: str, status: str, reason: str, message: str) -> None:
    for c in pod.status.conditions:
        if c.type == ctype:
            c.status, c.reason, c.message = status, reason, message
            return
    c = pod.status.conditions.add()
    c.type, c.status, c.reason, c.message = ctype, status, reason, message


def _ref(obj: Any) -> str:
    if isinstance(obj, Mapping):
        ns, name = obj.get("Namespace", ""), obj.get("Name", "")
        return f"{ns}/{name}" if ns else name
    return object_key(obj)


def _ref_kind(obj: Any) -> str:
    if isinstance(obj, Mapping):
        return str(obj.get("Kind", ""))
    return _kind_of(obj)
