"""A configured guest as a framework plugin (docs/abi.md §2 registration, §3 results, §6 statuses).

The plugin's class is composed from the extension points whose exports exist, so the framework
registers exactly those. PreFilter and EnqueueExtensions are always present: PreFilter pins the
pod's instance (wasm/pool.py) even when the guest has no `prefilter`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from time import perf_counter
from typing import TYPE_CHECKING, Any

from wasmsched.api.types import Pod, object_key
from wasmsched.framework import interface as fw
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from wasmsched.framework.interface import (
    BatchScores,
    FilterVerdicts,
    Handle,
    NodeBatch,
    NodeScore,
    NodeToStatus,
    PreFilterResult,
)
from wasmsched.framework.status import Code, Status, not_success
from wasmsched.framework.types import NodeInfo, PodInfo, QueuedPodInfo, get_pod_key
from wasmsched.metrics import names as metric_names
from wasmsched.util.klog import quote
from wasmsched.wasm import abi, encoding
from wasmsched.wasm.args import WasmPluginArgs, decode_args, is_wasm_args
from wasmsched.wasm.call_context import CallContext
from wasmsched.wasm.circuit import CircuitBreaker
from wasmsched.wasm.engine import Runtime, default_runtime
from wasmsched.wasm.errors import GuestCallError, WasmLoadError
from wasmsched.wasm.host import Host
from wasmsched.wasm.instance import CompiledGuest, GuestInstance
from wasmsched.wasm.loader import check_sha256, guest_origin
from wasmsched.wasm.pool import DISCARDED_TEXT, InstancePool, Pin, PoolError
from wasmsched.wasm.reload import Reloader, guest_source
from wasmsched.wasm.versions import GuestVersion, Versions

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics

log = logging.getLogger("wasmsched.wasm")


_ABI_CODES = frozenset(int(c) for c in Code)


def _status(ctx: CallContext, code: int) -> Status | None:
    """A guest status: the code verbatim (codes outside 0..6 act as Error), the reason as message.

    A code outside the ABI's gets a reason saying so first, so that the pod's message never comes
    out empty (docs/abi.md §6).
    """
    reason = ctx.status_reason
    if code == Code.SUCCESS and not reason:
        return None
    reasons = [reason] if reason else []
    if code not in _ABI_CODES:
        reasons.insert(0, f"wasm: {ctx.export} returned status {Code(code)}, outside the ABI's status codes "
                          f"0..{max(_ABI_CODES)}")
    return Status(Code(code), reasons)


def _batch_status(export: str, code: int, reason: bytes | None) -> Status | None:
    """_status for one call of a batch (GuestInstance.call_nodes)."""
    ctx = CallContext(export, status_reason=reason.decode("utf-8", "replace") if reason is not None else "")
    return _status(ctx, code)


class _Failed(Exception):
    """A call that failed on the host side or trapped; carries the Error status."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


# The extension_point label of a fault (kube's names, metrics.go; wasmsched's for the exports kube has no
# extension point label for).
_POINT_OF = {
    "prefilter": metric_names.PRE_FILTER, "filter": metric_names.FILTER, "postfilter": metric_names.POST_FILTER,
    "prescore": metric_names.PRE_SCORE, "score": metric_names.SCORE,
    "normalizescore": metric_names.SCORE_EXTENSION_NORMALIZE,
    "addpod": metric_names.PRE_FILTER_EXTENSION_ADD_POD, "removepod": metric_names.PRE_FILTER_EXTENSION_REMOVE_POD,
    "reserve": metric_names.RESERVE, "unreserve": metric_names.UNRESERVE, "permit": metric_names.PERMIT,
    "prebind": metric_names.PRE_BIND, "bind": metric_names.BIND, "postbind": metric_names.POST_BIND,
    "enqueue": "EventsToRegister", "queueinghint": "QueueingHint", "preenqueue": "PreEnqueue", "queuesort": "QueueSort",
    "cyclestate_clone": "CycleStateClone", "scorenodes": metric_names.SCORE,
}


class WasmPlugin(fw.PreFilterPlugin, fw.EnqueueExtensions):
    """Base of every composed wasm plugin class; see `plugin_class`."""

    def __init__(self, name: str, compiled: CompiledGuest, pool: InstancePool,
                 metrics: SchedulerMetrics | None = None, sha256: str = "") -> None:
        self.name = name
        self._handle = compiled.host.handle
        self._versions = Versions(GuestVersion(compiled, pool, sha256))
        self.exports = compiled.exports
        self.args: WasmPluginArgs = compiled.args
        self._metrics = metrics
        if metrics is not None:
            metrics.watch_wasm_pool(name, self._versions)
        imported = {i.name for i in compiled.module.imports if i.module == abi.SCHED}
        # §14.1: the guest reads how a call's NodeInfo differs from the snapshot's.
        self._overlay = "handle.node_info.overlay" in imported
        # §14.4: the guest keeps one state per CycleState id; the framework's CycleState carries it.
        self._clones_state = "cyclestate_clone" in self.exports
        # §17: Score for all of a batch's nodes in one call (a reload keeps the exports, §16.2).
        self._score_nodes = "scorenodes" in self.exports
        self._state_key = f"wasm/{name}/cycle_state"
        # §16.3
        self._ignore = self.args.failure_policy == "Ignore"
        clock = self._handle.clock if self._handle is not None else time.monotonic
        self.breaker = CircuitBreaker(name, self.args.max_consecutive_faults, self.args.fault_cooldown, clock)
        # The pods the open breaker rejected under Fail: activated when it closes.
        self._tripped_pods: dict[str, Pod] = {}
        self._tripped_lock = threading.Lock()
        self._breaker_closed = False
        # Polls guestURL when the args set reloadInterval (§16.2).
        self.reloader: Reloader | None = None
        # Where guestURL points (loader.guest_origin): a reload's module replaces this origin's cache entry.
        self.origin: str | None = None
        # What events_to_register gave the queue, which a reloaded module must give too.
        self._registered: list[tuple[str, int, bool]] | None = None

    # The current module's (new cycles run on it); a pod pinned to a replaced one finishes there (§16.2).
    @property
    def compiled(self) -> CompiledGuest:
        return self._versions.current.compiled

    @property
    def pool(self) -> InstancePool:
        return self._versions.current.pool

    @property
    def versions(self) -> Versions:
        return self._versions

    @property
    def handle(self) -> Handle | None:
        return self._handle

    def scheduler_metrics(self) -> SchedulerMetrics | None:
        return self._metrics

    # ----- faults and the failure policy (§16.3) --------------------------------------------------

    def _fault(self, export: str, status: Status) -> _Failed:
        """Counts a guest fault at `export` (feeding the circuit breaker); returns what the call raises."""
        m = self._metrics
        if m is not None:
            m.guest_fault(self.name, _POINT_OF.get(export, export), self.args.failure_policy)
        if self.breaker.fault() and m is not None:
            m.circuit_breaker_opened(self.name)
        return _Failed(status)

    def _pool_failed(self, export: str, e: PoolError) -> _Failed:
        """A call the pool refused: a fault (no instance to be had), except the refusal of the rest of a cycle
        whose instance a fault already discarded, which is that fault's consequence, not a new one."""
        status = Status.error(f"wasm: {export} error: {e}")
        return _Failed(status) if str(e) == DISCARDED_TEXT else self._fault(export, status)

    def _succeeded(self) -> None:
        if self.breaker.consecutive and self.breaker.success():
            self._breaker_closed = True

    def _activate_tripped(self) -> None:
        """After a call that closed the breaker, once its instance is free (an activated pod's PreEnqueue or
        QueueSort may need it): the pods the open breaker rejected go back to the active queue."""
        if not self._breaker_closed:
            return
        with self._tripped_lock:
            self._breaker_closed = False
            pods, self._tripped_pods = list(self._tripped_pods.values()), {}
        if pods and self._handle is not None:
            self._handle.activate(pods)

    def _check_breaker(self, export: str, pod: Pod | None = None) -> None:
        """Raises _Failed without entering the guest while the breaker is open."""
        until = self.breaker.open_until_now()
        if until is None:
            return
        if pod is not None and not self._ignore:
            with self._tripped_lock:
                self._tripped_pods[get_pod_key(pod)] = pod
        left = max(until - self.breaker.clock(), 0.0)
        raise _Failed(Status(Code.UNSCHEDULABLE, [
            f'wasm plugin "{self.name}" is failing: its circuit breaker opened after '
            f"{self.breaker.max_consecutive_faults} consecutive guest faults; its calls resume in {left:.0f}s"]))

    def _answer(self, f: _Failed) -> Status | None:
        """A failed call's status under Fail; None under Ignore, where the caller answers "no opinion"."""
        return None if self._ignore else f.status

    # ----- calling ------------------------------------------------------------------------------

    def _invoke(self, inst: GuestInstance, pool: InstancePool, ctx: CallContext, nodes: int = 0) -> Any:
        m = self._metrics
        try:
            if m is None or not m.should_sample_guest_call():
                r = inst.call(ctx, nodes)
            else:
                start = perf_counter()
                try:
                    r = inst.call(ctx, nodes)
                finally:
                    m.observe_guest_call(self.name, ctx.export, perf_counter() - start)
        except GuestCallError as e:
            if m is not None:
                m.guest_call_failed(self.name)
            if e.discard:
                pool.discard(inst)
            log.error('"Guest call failed" plugin="%s" export="%s" instance=%d err=%s', self.name, ctx.export,
                      inst.id, quote(e.text))
            raise self._fault(ctx.export, Status.error(e.text)) from None
        self._succeeded()
        return r

    def _call(self, pod: Pod, pin: Pin, ctx: CallContext, nodes: int = 0) -> Any:
        """Runs ctx.export on the pod's instance (`nodes`: GuestInstance.call's); raises _Failed with the Error
        status on failure."""
        self._check_breaker(ctx.export, pod)
        key = get_pod_key(pod)
        pool = self._versions.for_pod(key, pin).pool
        try:
            inst = pool.enter(key, pin)
        except PoolError as e:
            raise self._pool_failed(ctx.export, e) from None
        if inst is None:
            raise self._fault(ctx.export, Status.error(f"wasm: {ctx.export} error: no guest instance is pinned "
                                                       f"to pod {key}"))
        try:
            return self._invoke(inst, pool, ctx, nodes)
        finally:
            pool.exit(inst)
            self._after_call(ctx)

    def _unpinned_call(self, ctx: CallContext) -> Any:
        """Runs ctx.export on any instance of the current module (the shared one with §15.6): calls that
        belong to no pod's cycle. Raises _Failed with the Error status on failure."""
        # A pod an open breaker gates at PreEnqueue is activated when the breaker closes, as one it rejects.
        self._check_breaker(ctx.export, ctx.pod if ctx.export == "preenqueue" else None)
        pool = self.pool
        try:
            with pool.borrowed() as inst:
                return self._invoke(inst, pool, ctx)
        except PoolError as e:
            raise self._fault(ctx.export, Status.error(f"wasm: {ctx.export} error: {e}")) from None
        finally:
            self._after_call(ctx)

    def _after_call(self, ctx: CallContext) -> None:
        """§15.4: the pods the call asked to activate, once its instance is free again (an activated pod's
        queue entry may call this guest's queuesort); §16.2: frees a replaced module nobody holds."""
        self._versions.collect()
        self._activate_tripped()
        keys = ctx.pods_to_activate
        if not keys or self._handle is None:
            return
        ctx.pods_to_activate = None
        client = self._handle.client()
        pods = []
        for key in keys:
            namespace, _, name = key.rpartition("/")
            pod = client.get_pod(namespace, name)
            if pod is not None:
                pods.append(pod)
        if pods:
            self._handle.activate(pods)

    def _status_call(self, pod: Pod, pin: Pin, ctx: CallContext) -> Status | None:
        """An export returning just a status (i32); a fault is no opinion (None) under Ignore."""
        try:
            code = self._call(pod, pin, ctx)
        except _Failed as f:
            return self._answer(f)
        return _status(ctx, code)

    def _with_state(self, ctx: CallContext, state: CycleState | None) -> CallContext:
        """ctx with the call's CycleState and, for a guest that clones its state (§14.4), its id; raises
        _Failed when that CycleState is a copy the guest failed to make."""
        ctx.cycle_state = state
        if self._clones_state and state is not None:
            gs = state.get(self._state_key)
            if isinstance(gs, GuestCycleState):
                if gs.error is not None:
                    raise _Failed(gs.error)
                ctx.cycle_state_id = gs.id
        return ctx

    # ----- EnqueueExtensions --------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        events = self._events_of(self._versions.current)
        self._registered = _event_keys(events)
        return events

    def _events_of(self, version: GuestVersion) -> list[ClusterEventWithHint]:
        if "enqueue" not in self.exports:
            return encoding.default_events()
        ctx = CallContext("enqueue")
        try:
            with version.pool.borrowed() as inst:
                self._invoke(inst, version.pool, ctx)
        except (_Failed, PoolError) as e:
            if isinstance(e, PoolError):
                self._fault("enqueue", Status.error(str(e)))
            log.error('"failed enqueue" plugin="%s" err=%s', self.name, quote(str(e)))
            return encoding.default_events()
        if ctx.cluster_events_with_hints is not None:
            try:
                return self._events_with_hints(ctx.cluster_events_with_hints)
            except ValueError as e:
                self._fault("enqueue", Status.error(str(e)))
                log.error('"failed enqueue" plugin="%s" err=%s', self.name,
                          quote(f"invalid result.cluster_events_with_hints: {e}"))
                return encoding.default_events()
        return encoding.decode_cluster_events(ctx.cluster_events, self.name, version.compiled.host.warned_gvks)

    def _events_with_hints(self, data: bytes) -> list[ClusterEventWithHint]:
        """§14.3: [{"resource", "action", "hint"}] with the framework's names and values."""
        try:
            items = json.loads(data.decode("utf-8", "replace"))
        except json.JSONDecodeError as e:
            raise ValueError(str(e)) from None
        if not isinstance(items, list) or not items:
            raise ValueError("want a non-empty JSON array")
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise ValueError(f"[{i}] is not an object")
            resource, action, hint = item.get("resource"), item.get("action"), item.get("hint", False)
            if not isinstance(resource, str) or not resource:
                raise ValueError(f"[{i}].resource must be a non-empty string")
            if isinstance(action, bool) or not isinstance(action, int) or not 0 < action <= ActionType.ALL:
                raise ValueError(f"[{i}].action must be an ActionType in 1..{int(ActionType.ALL)}")
            if not isinstance(hint, bool):
                raise ValueError(f"[{i}].hint must be a boolean")
            fn = self._hint_fn(i, resource == EventResource.WILDCARD) if hint and "queueinghint" in self.exports \
                else None
            out.append(ClusterEventWithHint(ClusterEvent(resource, action), fn))
        return out

    def _hint_fn(self, index: int, wildcard: bool) -> Callable[[Any, Any, Any], QueueingHint]:
        def queueing_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
            """§14.3: the guest's hint for the registered event `index`; an error makes the queue requeue."""
            pods = self.compiled.host.pods
            ctx = CallContext("queueinghint", pod=pod, hint_event=index,
                              old_object=encoding.object_bytes(old, pods, wildcard),
                              new_object=encoding.object_bytes(new, pods, wildcard))
            r = self._unpinned_call(ctx)
            if r in (QueueingHint.QUEUE_SKIP, QueueingHint.QUEUE) and not ctx.status_reason:
                return QueueingHint(r)
            raise self._fault("queueinghint", Status.error(f"wasm: queueinghint returned {r}" + (
                f": {ctx.status_reason}" if ctx.status_reason else "")))

        return queueing_hint

    # ----- PreEnqueue and QueueSort (§15.1, §15.2; registered when exported) ----------------------

    def pre_enqueue(self, pod: Pod) -> Status | None:
        ctx = CallContext("preenqueue", pod=pod)
        try:
            code = self._unpinned_call(ctx)
        except _Failed as f:
            return self._answer(f)
        return _status(ctx, code)

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.sort_key(a) < self.sort_key(b)

    def sort_key(self, qpi: QueuedPodInfo) -> tuple[int, bytes]:
        """The guest's key for the pod (§15.2): (0, key); (1, b"") after a failed call, logged, so that the
        pod sorts after every pod with a key and is still scheduled (under either failure policy)."""
        host = self.compiled.host
        first = qpi.initial_attempt_timestamp
        info = {"timestamp": host.unix_ns(qpi.timestamp),
                "initialAttemptTimestamp": None if first is None else host.unix_ns(first), "attempts": qpi.attempts}
        ctx = CallContext("queuesort", pod=qpi.pod, queued_pod_info=json.dumps(info).encode())
        try:
            code = self._unpinned_call(ctx)
            err = "" if code == Code.SUCCESS else f"wasm: queuesort returned status {Code(code)}" + (
                f": {ctx.status_reason}" if ctx.status_reason else "")
            if not err and ctx.sort_key is None:
                err = "wasm: queuesort set no result.sort_key"
                self._fault("queuesort", Status.error(err))
        except _Failed as f:
            err = f.status.message()
        if err:
            log.error('"QueueSort failed, the pod sorts last" plugin="%s" pod="%s" err=%s', self.name,
                      object_key(qpi.pod), quote(err))
            return (1, b"")
        return (0, ctx.sort_key or b"")

    # ----- PreFilter (always registered: it pins the pod's instance) -----------------------------

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        try:
            if "prefilter" not in self.exports:
                self._check_breaker("prefilter", pod)
                key = get_pod_key(pod)
                try:
                    with self._versions.for_pod(key, Pin.PREFILTER).pool.pinned(key, Pin.PREFILTER):
                        return None, None
                except PoolError as e:
                    raise self._pool_failed("prefilter", e) from None
            if self._clones_state:
                state.write(self._state_key, GuestCycleState(self, pod, 0, []))
            ctx = CallContext("prefilter", pod=pod, cycle_state=state)
            code = self._call(pod, Pin.PREFILTER, ctx)
        except _Failed as f:
            # Ignore: Skip, so that the framework runs none of this plugin's Filter for the pod.
            return None, (Status(Code.SKIP) if self._ignore else f.status)
        result = PreFilterResult(set(ctx.node_names)) if ctx.node_names else None
        return result, _status(ctx, code)

    def pre_filter_extensions(self) -> fw.PreFilterExtensions | None:
        return self if ("addpod" in self.exports or "removepod" in self.exports) else None

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        return self._pod_extension("addpod", state, pod_to_schedule, pod_info_to_add, node_info)

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        return self._pod_extension("removepod", state, pod_to_schedule, pod_info_to_remove, node_info)

    def _pod_extension(self, export: str, state: CycleState, pod: Pod, target: PodInfo,
                       node_info: NodeInfo) -> Status | None:
        if export not in self.exports:
            return None
        try:
            ctx = self._with_state(CallContext(export, pod=pod, node_name=node_info.name, target_pod=target.pod,
                                               node_info=node_info), state)
        except _Failed as f:
            return self._answer(f)
        return self._status_call(pod, Pin.SCHEDULING, ctx)

    # ----- Filter -------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return self._filter_statuses(state, pod, [node_info]).get(0)

    def filter_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> FilterVerdicts:
        return {i: st for i, st in self._filter_statuses(state, pod, batch.node_infos).items() if not_success(st)}

    def _node_ctx(self, export: str, state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo]) -> CallContext:
        """The context of filter or score over node_infos: one NodeInfo is the call's own (§14.1's overlay is
        computed from it; a batch is always of the snapshot's NodeInfos)."""
        return self._with_state(CallContext(export, pod=pod, node_info=node_infos[0] if len(node_infos) == 1 else None),
                                state)

    def _enter_nodes(self, export: str, state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo]
                     ) -> tuple[CallContext, InstancePool, GuestInstance]:
        """filter/score: the call's context and the pod's instance, entered; raises _Failed."""
        ctx = self._node_ctx(export, state, pod, node_infos)
        self._check_breaker(export, pod)
        key = get_pod_key(pod)
        pool = self._versions.for_pod(key, Pin.SCHEDULING).pool
        try:
            inst = pool.enter(key, Pin.SCHEDULING)
        except PoolError as e:
            raise self._pool_failed(export, e) from None
        assert inst is not None
        return ctx, pool, inst

    def _filter_statuses(self, state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo]) -> dict[int, Status]:
        """The statuses the guest gave (a Success may carry a reason), by the nodes' positions; a node without
        one passed. One pin and one native crossing for the whole batch; after a trap the remaining nodes fail
        without entering the guest (under Ignore they pass: the guest has no opinion on them)."""
        n = len(node_infos)
        if self._versions.for_pod(get_pod_key(pod), Pin.SCHEDULING).compiled.host.in_nested_filters():
            return {}  # the guest asked for every Filter from one of its calls: its own is its business (§14.5)
        try:
            ctx, pool, inst = self._enter_nodes("filter", state, pod, node_infos)
        except _Failed as f:
            st = self._answer(f)
            return {} if st is None else dict.fromkeys(range(n), st)
        try:
            _, notes, ran, error = self._invoke_nodes(inst, pool, ctx, node_infos)
        finally:
            pool.exit(inst)
            self._versions.collect()
            self._activate_tripped()
        out: dict[int, Status] = {}
        for i, code, reason in notes:
            st = _batch_status("filter", code, reason)
            if st is not None:
                out[i] = st
        if error is not None and not self._ignore:
            out[ran] = error
            out.update(dict.fromkeys(range(ran + 1, n), Status.error(f"wasm: filter error: {DISCARDED_TEXT}")))
        return out

    def _invoke_nodes(self, inst: GuestInstance, pool: InstancePool, ctx: CallContext,
                      node_infos: Sequence[NodeInfo]
                      ) -> tuple[list[int] | None, list[tuple[int, int, bytes | None]], int, Status | None]:
        """ctx.export over the nodes on inst (GuestInstance.call_nodes): the scores, the notes of calls with a
        status, how many calls succeeded, and the Error status of the one that failed (the instance is
        then discarded)."""
        m = self._metrics
        export = ctx.export
        names = [ni.name for ni in node_infos]
        start = perf_counter() if m is not None and m.should_sample_guest_call() else None
        values, notes, ran, error = inst.call_nodes(ctx, names)
        if start is not None and m is not None:
            # A sampled batch counts as its calls, each taking the batch's average.
            calls = ran + (error is not None)
            for _ in range(calls):
                m.observe_guest_call(self.name, export, (perf_counter() - start) / calls)
        if error is None:
            self._succeeded()
            return values, notes, ran, None
        if m is not None:
            m.guest_call_failed(self.name)
        pool.discard(inst)
        log.error('"Guest call failed" plugin="%s" export="%s" instance=%d err=%s', self.name, export, inst.id,
                  quote(error.text))
        return values, notes, ran, self._fault(export, Status.error(error.text)).status

    # ----- PostFilter ---------------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: Pod,
                    filtered_node_status_map: NodeToStatus) -> tuple[fw.PostFilterResult | None, Status | None]:
        statuses = {name: int(st.code) for name, st in filtered_node_status_map.items()}
        try:
            ctx = self._with_state(CallContext("postfilter", pod=pod, node_statuses=statuses), state)
            r = self._call(pod, Pin.SCHEDULING, ctx)
        except _Failed as f:
            if self._ignore:
                # kube's "this plugin could not help": the next PostFilter plugin runs.
                return None, Status(Code.UNSCHEDULABLE, [f"wasm: postfilter fault ignored: {f.status.message()}"])
            return None, f.status
        mode, code = encoding.unpack_postfilter(r)
        result = fw.PostFilterResult(fw.NominatingInfo(ctx.nominated_node_name, mode))
        return result, _status(ctx, code)

    # ----- PreScore / Score / NormalizeScore ----------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            ctx = self._with_state(CallContext("prescore", pod=pod,
                                               filtered_nodes=encoding.filtered_nodes(state, nodes)), state)
            code = self._call(pod, Pin.SCHEDULING, ctx)
        except _Failed as f:
            # Ignore: Skip, so that the framework runs none of this plugin's Score for the pod.
            return Status(Code.SKIP) if self._ignore else f.status
        return _status(ctx, code)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        scores, st = self.score_batch(state, pod, NodeBatch([node_info]))
        return (scores[0] if scores else 0), st

    def score_batch(self, state: CycleState, pod: Pod, batch: NodeBatch) -> tuple[BatchScores, Status | None]:
        n = len(batch.node_infos)
        if self._score_nodes:
            return self._scorenodes(state, pod, batch.node_infos)
        try:
            ctx, pool, inst = self._enter_nodes("score", state, pod, batch.node_infos)
        except _Failed as f:
            st = self._answer(f)
            return ([0] * n, None) if st is None else ([], st)
        try:
            scores, notes, _, error = self._invoke_nodes(inst, pool, ctx, batch.node_infos)
        finally:
            pool.exit(inst)
            self._versions.collect()
            self._activate_tripped()
        for _, code, reason in notes:  # in node order: the first failing status is the result
            st = _batch_status("score", code, reason)
            if not_success(st):
                return [], st
        if error is not None:
            return ([0] * n, None) if self._ignore else ([], error)
        return scores or [], None

    def _scorenodes(self, state: CycleState, pod: Pod, node_infos: Sequence[NodeInfo]
                    ) -> tuple[BatchScores, Status | None]:
        """§17: the batch's scores from one call of the guest's scorenodes. Its status stands for the batch (the
        guest stops at the first node that fails, as kube's Score runner does); scores that cannot be read are an
        Error, never zeros."""
        n = len(node_infos)
        try:
            ctx = self._with_state(CallContext("scorenodes", pod=pod,
                                               filtered_nodes=encoding.filtered_nodes(state, node_infos),
                                               node_info=node_infos[0] if n == 1 else None), state)
            code, _ = encoding.unpack_scorenodes(self._call(pod, Pin.SCHEDULING, ctx, nodes=n))
            st = _status(ctx, code)
            if not_success(st):
                return [], st
            try:
                return encoding.parse_node_scores(ctx.node_scores_result, n), None
            except ValueError as e:
                raise self._fault("scorenodes", Status.error(f"wasm: scorenodes error: invalid scores: {e}")) from None
        except _Failed as f:
            st = self._answer(f)
            return ([0] * n, None) if st is None else ([], st)

    def score_extensions(self) -> fw.ScoreExtensions | None:
        return self if "normalizescore" in self.exports and "score" in self.exports else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        try:
            ctx = self._with_state(CallContext("normalizescore", pod=pod,
                                               node_scores=[(ns.name, ns.score) for ns in scores]), state)
            code = self._call(pod, Pin.SCHEDULING, ctx)
            try:
                encoding.parse_normalized_scores(ctx.normalized_score_list, scores)
            except ValueError as e:
                raise self._fault("normalizescore", Status.error(
                    f"wasm: normalizescore error: invalid result.normalized_score_list: {e}")) from None
        except _Failed as f:
            st = self._answer(f)
            if st is None:
                for ns in scores:  # the guest's scores may be outside 0..100 before it normalizes them
                    ns.score = 0
            return st
        return _status(ctx, code)

    # ----- Reserve / Permit ---------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if "reserve" not in self.exports:
            return None
        try:
            ctx = self._with_state(CallContext("reserve", pod=pod, node_name=node_name), state)
        except _Failed as f:
            return self._answer(f)
        return self._status_call(pod, Pin.SCHEDULING, ctx)

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        key = get_pod_key(pod)
        try:
            if "unreserve" in self.exports:
                self._no_result_call("unreserve", pod, node_name)
        finally:
            self._release(key)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        try:
            ctx = self._with_state(CallContext("permit", pod=pod, node_name=node_name), state)
            r = self._call(pod, Pin.SCHEDULING, ctx)
        except _Failed as f:
            return self._answer(f), 0.0
        code, timeout_ms = encoding.unpack_permit(r)
        return _status(ctx, code), timeout_ms / 1000.0

    # ----- binding cycle ------------------------------------------------------------------------

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._status_call(pod, Pin.BINDING, CallContext("prebind", pod=pod, node_name=node_name))

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        ctx = CallContext("bind", pod=pod, node_name=node_name)
        try:
            code = self._call(pod, Pin.BINDING, ctx)
        except _Failed as f:
            # Ignore: Skip, so that the next Bind plugin binds the pod.
            return Status(Code.SKIP) if self._ignore else f.status
        return _status(ctx, code)

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        try:
            self._no_result_call("postbind", pod, node_name)
        finally:
            self._release(get_pod_key(pod))

    def _no_result_call(self, export: str, pod: Pod, node_name: str) -> None:
        """unreserve/postbind: on the pod's instance if it has one; a failure is logged (§10)."""
        ctx = CallContext(export, pod=pod, node_name=node_name)
        key = get_pod_key(pod)
        try:
            self._check_breaker(export)
            pool = self._versions.for_pod(key, Pin.BINDING).pool
            try:
                inst = pool.enter(key, Pin.BINDING)
            except PoolError as e:
                raise self._pool_failed(export, e) from None
            if inst is None:
                return
            try:
                self._invoke(inst, pool, ctx)
            finally:
                pool.exit(inst)
        except _Failed as e:
            log.error('"failed %s" plugin="%s" pod="%s" err=%s', export, self.name, key, quote(str(e)))
        finally:
            self._after_call(ctx)

    # ----- the framework's own hooks (interface.py) -------------------------------------------

    def _release(self, key: str) -> None:
        for v in self._versions.all():
            v.pool.release(key)
        self._versions.collect()

    def scheduling_cycle_done(self, pod: Pod, succeeded: bool) -> None:
        key = get_pod_key(pod)
        for v in self._versions.all():
            v.pool.scheduling_done(key, succeeded)
        self._versions.collect()

    def binding_cycle_done(self, pod: Pod) -> None:
        self._release(get_pod_key(pod))

    def pod_deleted(self, pod: Pod) -> None:
        key = get_pod_key(pod)
        with self._tripped_lock:
            self._tripped_pods.pop(key, None)
        self._release(key)

    def close(self) -> None:
        if self.reloader is not None:
            self.reloader.stop()
        self._versions.close()

    # ----- hot reload (§16.2) -------------------------------------------------------------------

    def reload_module(self, data: bytes, runtime: Runtime, objects: Any) -> GuestVersion:
        """Makes the module of `data` the one new scheduling cycles run on; pods pinned to the running one
        finish their cycles there. Raises WasmLoadError, keeping the running module, when the new one does
        not load, exports other functions, or registers other cluster events."""
        cur = self._versions.current
        new = _load_version(self.name, self.args, runtime, self._handle, objects, data, self.origin)
        try:
            if new.compiled.exports != cur.compiled.exports:
                def listed(e: frozenset[str]) -> str:
                    return ",".join(sorted(e)) or "none"
                raise WasmLoadError(f"wasm: the new module exports {listed(new.compiled.exports)}, the running one "
                                    f"{listed(cur.compiled.exports)}: a plugin's extension points are fixed when the "
                                    "scheduler starts")
            if "enqueue" in self.exports:
                was = self._registered if self._registered is not None else _event_keys(self._events_of(cur))
                now = _event_keys(self._events_of(new))
                if was != now:
                    raise WasmLoadError(f"wasm: the new module's EventsToRegister ({_events_text(now)}) differ from "
                                        f"the running one's ({_events_text(was)}): the queue's event registrations are "
                                        "fixed when the scheduler starts; restart it to take the new ones")
        except BaseException:
            new.pool.close()
            raise
        self._versions.replace(new)
        self.breaker.reset()
        return new

    # ----- observation --------------------------------------------------------------------------

    def counters(self) -> dict[str, int]:
        return self._versions.counters()


def _event_keys(events: list[ClusterEventWithHint]) -> list[tuple[str, int, bool]]:
    return [(e.event.resource, int(e.event.action_type), e.queueing_hint_fn is not None) for e in events]


def _events_text(keys: list[tuple[str, int, bool]]) -> str:
    return ", ".join(f"{r}/{a}{'+hint' if h else ''}" for r, a, h in keys)


class GuestCycleState:
    """The framework-side handle of one of a guest's cycle states (docs/abi.md §14.4), kept in the
    CycleState under the plugin's key: cloning the CycleState makes the guest copy its state."""

    __slots__ = ("__weakref__", "error", "id", "plugin", "pod", "released")

    def __init__(self, plugin: WasmPlugin, pod: Pod, state_id: int, released: list[int],
                 error: Status | None = None) -> None:
        self.plugin = plugin
        self.pod = pod
        self.id = state_id
        # Ids of this cycle's copies the framework dropped, shared by all of them: the guest frees them at
        # its next copy.
        self.released = released
        self.error = error

    def clone(self) -> GuestCycleState:
        if self.error is not None:
            return self
        released = self.released[:]
        del self.released[:len(released)]
        ctx = CallContext("cyclestate_clone", pod=self.pod, cycle_state_id=self.id, released_states=released)
        try:
            new_id = self.plugin._call(self.pod, Pin.SCHEDULING, ctx)
        except _Failed as f:
            return GuestCycleState(self.plugin, self.pod, -1, self.released, f.status)
        if new_id < 1:
            detail = f": {ctx.status_reason}" if ctx.status_reason else ""
            return GuestCycleState(self.plugin, self.pod, -1, self.released, self.plugin._fault(
                "cyclestate_clone",
                Status.error(f"wasm: cyclestate_clone error: returned {new_id}, want a state id >= 1{detail}")).status)
        copy = GuestCycleState(self.plugin, self.pod, new_id, self.released)
        weakref.finalize(copy, self.released.append, new_id)
        return copy


# ----- class composition and the factory ---------------------------------------------------------

_POINTS: list[tuple[tuple[str, ...], type[fw.Plugin]]] = [
    (("preenqueue",), fw.PreEnqueuePlugin),
    (("queuesort",), fw.QueueSortPlugin),
    (("filter",), fw.FilterPlugin),
    (("postfilter",), fw.PostFilterPlugin),
    (("prescore",), fw.PreScorePlugin),
    (("score",), fw.ScorePlugin),
    (("reserve", "unreserve"), fw.ReservePlugin),
    (("permit",), fw.PermitPlugin),
    (("prebind",), fw.PreBindPlugin),
    (("bind",), fw.BindPlugin),
    (("postbind",), fw.PostBindPlugin),
]
_classes: dict[frozenset[str], type[WasmPlugin]] = {}


def plugin_class(exports: frozenset[str]) -> type[WasmPlugin]:
    """WasmPlugin plus the framework interface of every extension point the guest exports."""
    cls = _classes.get(exports)
    if cls is None:
        bases = [iface for names, iface in _POINTS if any(n in exports for n in names)]
        title = "+".join(iface.__name__.removesuffix("Plugin") for iface in bases) or "PreFilter"
        cls = type(f"WasmPlugin[{title}]", (WasmPlugin, *bases), {})
        _classes[exports] = cls
    return cls


def new_wasm_plugin(name: str, raw_args: Mapping[str, Any] | None, handle: Handle | None,
                    runtime: Runtime | None = None, base_dir: str | os.PathLike[str] | None = None,
                    event_object: Mapping[str, str] | None = None) -> WasmPlugin:
    """Loads, checks, links and primes the guest configured under `name` (docs/abi.md §2 loading).

    base_dir: where a relative guestURL is resolved (the configuration file's directory); None is
    the working directory. event_object: what a failed reload's Warning event regards (§16.2).
    """
    args = decode_args(name, raw_args)
    rt = runtime or default_runtime()
    source = guest_source(args.guest_url, base_dir, args.oci)
    data = source.fetch()
    objects = handle.watched_objects(args.watch) if handle is not None and args.watch else None
    origin = guest_origin(args.guest_url, base_dir)
    version = _load_version(name, args, rt, handle, objects, data, origin)
    exports = version.compiled.exports
    if "normalizescore" in exports and "score" not in exports:
        log.warning('"normalizescore without score is ignored" plugin="%s"', name)
    metrics = handle.scheduler_metrics() if handle is not None else None
    plugin = plugin_class(exports)(name, version.compiled, version.pool, metrics, version.sha256)
    plugin.origin = origin
    log.info('"Loaded wasm plugin" plugin="%s" url="%s" exports="%s"', name, args.guest_url,
             ",".join(e for e in (*abi.EXPORTS, *abi.V2_POINT_EXPORTS) if e in exports))
    if args.reload_interval is not None:
        plugin.reloader = Reloader(plugin, source, args.reload_interval, rt, objects, event_object)
        plugin.reloader.start()
    return plugin


def _load_version(name: str, args: WasmPluginArgs, rt: Runtime, handle: Handle | None, objects: Any,
                  data: bytes, origin: str | None) -> GuestVersion:
    """The module of `data`, checked (guestSHA256, §2's shape), linked and primed (a trap in `_start` fails
    here): a plugin's first version, or a reload's."""
    digest = check_sha256(args.guest_url, data, args.guest_sha256)
    module = rt.compile(data, origin)
    exports = abi.check_module(module)
    host = Host(name, args.guest_config, args.log_severity, handle, rt.pods, objects)
    compiled = CompiledGuest.link(name, rt, module, host, args, exports)
    pool = InstancePool(lambda: GuestInstance(compiled), args.max_instances, args.timeout,
                        hand_off_to_binding=any(e in exports for e in abi.BINDING_EXPORTS),
                        shared=args.shared_instance, plugin=name)
    pool.prime()
    return GuestVersion(compiled, pool, digest)


def wasm_plugin_factory(name: str, base_dir: str | os.PathLike[str] | None = None,
                        event_object: Mapping[str, str] | None = None) -> Callable[[Any, Handle], fw.Plugin]:
    def factory(args: Any, handle: Handle) -> fw.Plugin:
        return new_wasm_plugin(name, args, handle, base_dir=base_dir, event_object=event_object)

    return factory


def register_wasm_plugins(registry: Any, cfg: Any, base_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Registers every plugin whose pluginConfig args carry guestURL (in any profile); returns the names.

    `registry` is a plugins.registry.Registry, `cfg` a KubeSchedulerConfiguration; `base_dir` is the
    directory relative guestURLs are resolved against: the configuration file's (None: the working
    directory, for configurations built in code).
    """
    le = cfg.leader_election or {}
    # §16.2: a failed reload's Warning event regards the scheduler's leader-election Lease (named even
    # without leader election, where `kubectl describe lease` or `get events` find it).
    lease = {"Kind": "Lease", "APIVersion": "coordination.k8s.io/v1",
             "Name": le.get("resourceName") or "kube-scheduler",
             "Namespace": le.get("resourceNamespace") or "kube-system"}
    names: list[str] = []
    for profile in cfg.profiles:
        for pc in profile.plugin_config:
            if is_wasm_args(pc.args) and pc.name not in names:
                if pc.name in registry:
                    raise ValueError(f'pluginConfig "{pc.name}": args carry guestURL, but "{pc.name}" is an in-tree'
                                     " plugin; give the wasm plugin its own name")
                registry.register(pc.name, wasm_plugin_factory(pc.name, base_dir, lease))
                names.append(pc.name)
    return names
