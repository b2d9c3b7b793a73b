"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's tools/leaderelection does it for
kube-scheduler (LeaseLock, non-coordinated, ReleaseOnCancel, a healthz watchdog).

One elector per process: `run(stop)` acquires the lease (retrying every retryPeriod with jitter
1.2), starts the leader's work on its own thread, renews every retryPeriod, and gives up when
renewals failed for renewDeadline. Every write carries the resourceVersion of the Lease last read or
written, so two candidates never both believe their write won (optimistic concurrency).
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from wasmsched.api.errors import ApiError, TransportError, is_conflict, is_not_found
from wasmsched.api.wellknown import format_go_duration, now_rfc3339, parse_go_duration
from wasmsched.config.decode import Reader, raise_if_errors, type_error
from wasmsched.config.errors import FieldError, child, invalid, required
from wasmsched.kube.api import KubeApi
from wasmsched.kube.codec import CodecError
from wasmsched.util.klog import V0, quote

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2  # client-go's leaderelection.JitterFactor
# kube-scheduler's NewLeaderHealthzAdaptor(20s): how long past the lease's expiry a leader that
# could not renew still reports healthy.
HEALTHZ_TIMEOUT_SECONDS = 20.0
HEALTH_CHECK_NAME = "leaderElection"  # HealthzAdaptor.Name()
# what a request of the lock may fail with: the server's refusal, no server, a reply that is no Lease
_REQUEST_ERRORS = (ApiError, TransportError, CodecError)

_NANOS = 1_000_000_000
_KEYS = ("leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock", "resourceName",
         "resourceNamespace")  # fmt: skip


@dataclass
class LeaderElectionConfig:
    """KubeSchedulerConfiguration's `leaderElection` (component-base LeaderElectionConfiguration) with
    kube-scheduler's defaults; durations in seconds."""

    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None, path: str = "leaderElection") -> LeaderElectionConfig:
        """Decode the configuration file's `leaderElection` object (absent keys keep the defaults) and
        validate it as ValidateLeaderElectionConfiguration does. Raises ConfigError naming each field."""
        errors: list[FieldError] = []
        r = Reader(dict(d) if d is not None else None, path, errors, _KEYS)
        defaults = cls()
        cfg = cls(
            leader_elect=r.boolean("leaderElect", defaults.leader_elect),
            lease_duration=_duration(r, "leaseDuration", defaults.lease_duration),
            renew_deadline=_duration(r, "renewDeadline", defaults.renew_deadline),
            retry_period=_duration(r, "retryPeriod", defaults.retry_period),
            resource_lock=_string(r, "resourceLock", defaults.resource_lock),
            resource_name=_string(r, "resourceName", defaults.resource_name),
            resource_namespace=_string(r, "resourceNamespace", defaults.resource_namespace),
        )
        raise_if_errors(errors)
        raise_if_errors(cfg.validate(path))
        return cfg

    def validate(self, path: str = "leaderElection") -> list[FieldError]:
        """component-base's ValidateLeaderElectionConfiguration, plus kube-scheduler's "leases only"."""
        if not self.leader_elect:
            return []
        errs: list[FieldError] = []
        for name, value in (("leaseDuration", self.lease_duration), ("renewDeadline", self.renew_deadline),
                            ("retryPeriod", self.retry_period)):  # fmt: skip
            if value <= 0:
                errs.append(invalid(child(path, name), _go(value), "must be greater than zero"))
        if self.lease_duration <= self.renew_deadline:
            errs.append(invalid(child(path, "leaseDuration"), _go(self.renew_deadline),
                                "must be greater than `RenewDeadline`"))  # fmt: skip
        if not self.resource_lock:
            errs.append(required(child(path, "resourceLock")))
        elif self.resource_lock != "leases":
            errs.append(invalid(child(path, "resourceLock"), self.resource_lock, 'resourceLock value must be "leases"'))
        if not self.resource_namespace:
            errs.append(required(child(path, "resourceNamespace")))
        if not self.resource_name:
            errs.append(required(child(path, "resourceName")))
        return errs


def _go(seconds: float) -> str:
    return format_go_duration(round(seconds * _NANOS))


def _duration(r: Reader, name: str, default: float) -> float:
    v = r.raw(name)
    if v is None:
        return default
    if not isinstance(v, str):
        r.errors.append(type_error(r.at(name), v, "string"))
        return default
    try:
        return parse_go_duration(v) / _NANOS
    except ValueError as e:
        r.errors.append(invalid(r.at(name), v, str(e)))
        return default


def _string(r: Reader, name: str, default: str) -> str:
    # an explicit "" stays "" so that validation reports it as required, like kube
    v = r.string(name)
    return default if v is None else v


def new_identity() -> str:
    """kube-scheduler's lock identity: the hostname plus a uniquifier, so that two processes on the same
    host never both lead."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def now_micro_time() -> str:
    """The current time as metav1.MicroTime serializes it (RFC 3339, microseconds, UTC)."""
    return now_rfc3339(micro=True)


@dataclass(frozen=True)
class LeaderElectionRecord:
    """resourcelock.LeaderElectionRecord; times are the MicroTime strings as read or written."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0
    preferred_holder: str = ""
    strategy: str = ""

    @classmethod
    def from_lease_spec(cls, spec: Mapping[str, Any]) -> LeaderElectionRecord:
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
            preferred_holder=spec.get("preferredHolder") or "",
            strategy=spec.get("strategy") or "",
        )

    def to_lease_spec(self) -> dict[str, Any]:
        """LeaderElectionRecordToLeaseSpec: holder, duration and transitions always written."""
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": self.acquire_time,
            "renewTime": self.renew_time,
            "leaseTransitions": self.leader_transitions,
        }
        if self.preferred_holder:
            spec["preferredHolder"] = self.preferred_holder
        if self.strategy:
            spec["strategy"] = self.strategy
        return spec


def lock_client(api: KubeApi) -> KubeApi:
    """resourcelock.NewFromKubeconfig: the lock's client of its own over api's configuration and
    connection settings, so renewals never wait behind the scheduler's requests in one rate limiter."""
    return KubeApi(api.configuration, api.connection)


class LeaseLock:
    """resourcelock.LeaseLock: get/create/update one Lease, remembering the object last seen so that
    an update carries its resourceVersion. Requests raise ApiError, TransportError or CodecError."""

    def __init__(self, api: KubeApi, namespace: str, name: str, identity: str, timeout: float) -> None:
        self.api = api
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.timeout = timeout  # client-go gives the lock's client renewDeadline/2
        self._lease: dict[str, Any] | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def _path(self, named: bool) -> str:
        base = f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases"
        return f"{base}/{self.name}" if named else base

    def _request(self, method: str, named: bool, body: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = self.api.request_json(method, self._path(named), body=body, timeout=self.timeout)
        if not isinstance(reply, dict):
            raise CodecError(f"the reply to {method} {self._path(named)} is not a JSON object")
        return reply

    def get(self) -> LeaderElectionRecord:
        lease = self._request("GET", True)
        self._lease = lease
        return LeaderElectionRecord.from_lease_spec(lease.get("spec") or {})

    def create(self, record: LeaderElectionRecord) -> None:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_lease_spec(),
        }
        self._lease = self._request("POST", False, body)

    def update(self, record: LeaderElectionRecord) -> None:
        if self._lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        body = dict(self._lease)
        body["spec"] = record.to_lease_spec()
        self._lease = self._request("PUT", True, body)


class LeaderElector:
    """client-go's LeaderElector with a LeaseLock.

    `on_started_leading(leading)` runs on its own thread once the lease is acquired; `leading` is set
    when leadership ends (lost or stopped), and the work must stop then. `on_stopped_leading()` is
    called when `run` returns, whether or not this process ever led (as client-go's deferred call).
    """

    def __init__(
        self,
        api: KubeApi,
        config: LeaderElectionConfig,
        identity: str,
        on_started_leading: Callable[[threading.Event], None],
        on_stopped_leading: Callable[[], None],
        on_new_leader: Callable[[str], None] | None = None,
        release_on_cancel: bool = True,
        healthz_timeout: float = HEALTHZ_TIMEOUT_SECONDS,
    ) -> None:
        _check_timing(config)
        if not identity:
            raise ValueError("Lock identity is empty")
        self.config = config
        self.identity = identity
        self.release_on_cancel = release_on_cancel  # kube-scheduler sets ReleaseOnCancel: true
        self.healthz_timeout = healthz_timeout
        self._on_started_leading = on_started_leading
        self._on_stopped_leading = on_stopped_leading
        self._on_new_leader = on_new_leader
        self.lock = LeaseLock(api, config.resource_namespace, config.resource_name, identity,
                              timeout=max(config.renew_deadline / 2, 1.0))  # fmt: skip
        self._mu = threading.Lock()
        self._observed = LeaderElectionRecord()
        self._observed_time = 0.0  # time.monotonic() of the last observation
        self._observed_read: LeaderElectionRecord | None = None  # the record last read from the server
        self._reported_leader = ""
        self._leading_thread: threading.Thread | None = None

    # --- observed record -------------------------------------------------------------------------

    def _set_observed(self, record: LeaderElectionRecord) -> None:
        with self._mu:
            self._observed = record
            self._observed_time = time.monotonic()

    def _observed_record(self) -> LeaderElectionRecord:
        with self._mu:
            return self._observed

    def _lease_valid(self, now: float) -> bool:
        with self._mu:
            return self._observed_time + self._observed.lease_duration_seconds > now

    def get_leader(self) -> str:
        """The identity of the last observed holder ("" when none)."""
        return self._observed_record().holder_identity

    def is_leader(self) -> bool:
        return self._observed_record().holder_identity == self.identity

    def check(self) -> str | None:
        """The healthz/readyz check (HealthzAdaptor): a reason when this process believes it leads but
        its last successful renewal is older than leaseDuration + the tolerated timeout."""
        if not self.is_leader():
            return None
        with self._mu:
            since = time.monotonic() - self._observed_time
        if since > self.config.lease_duration + self.healthz_timeout:
            return f"failed election to renew leadership on lease {self.config.resource_name}"
        return None

    # --- run ---------------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Campaign until `stop` is set or leadership is lost (client-go's Run)."""
        try:
            if not self._acquire(stop):
                return
            leading = threading.Event()
            thread = threading.Thread(target=self._on_started_leading, args=(leading,), name="leader", daemon=True)
            self._leading_thread = thread
            thread.start()
            try:
                self._renew(stop)
            finally:
                # the leader's work stops before the lease is released, so that the next leader
                # never overlaps with it
                leading.set()
            if self.release_on_cancel:
                self.release()
        finally:
            self._on_stopped_leading()

    def _acquire(self, stop: threading.Event) -> bool:
        desc = self.lock.describe()
        log.log(V0, '"Attempting to acquire leader lease..." lock="%s"', desc)
        while not stop.is_set():
            succeeded = self._try_acquire_or_renew()
            self._maybe_report_transition()
            if succeeded:
                log.log(V0, '"Successfully acquired lease" lock="%s"', desc)
                return True
            log.debug('"Failed to acquire lease" lock="%s"', desc)
            # wait.JitterUntil(retryPeriod, 1.2, sliding): the wait starts after the attempt
            period = self.config.retry_period
            if stop.wait(period + random.random() * JITTER_FACTOR * period):
                break
        return False

    def _renew(self, stop: threading.Event) -> None:
        desc = self.lock.describe()
        while not stop.is_set():
            # wait.PollUntilContextTimeout(retryPeriod, renewDeadline, immediate)
            deadline = time.monotonic() + self.config.renew_deadline
            renewed = False
            while not stop.is_set():
                renewed = self._try_acquire_or_renew()
                if renewed or time.monotonic() >= deadline:
                    break
                stop.wait(min(self.config.retry_period, max(deadline - time.monotonic(), 0.0)))
            self._maybe_report_transition()
            if stop.is_set():
                return
            if not renewed:
                log.log(V0, '"Failed to renew lease" lock="%s" err="timed out waiting for the condition"', desc)
                return
            log.debug('"Successfully renewed lease" lock="%s"', desc)
            stop.wait(self.config.retry_period)

    def release(self) -> bool:
        """Give the lease up (ReleaseOnCancel): holder cleared, leaseDurationSeconds 1, so that another
        candidate acquires it at its next try. True when released or not ours."""
        deadline = time.monotonic() + self.config.renew_deadline
        while True:
            try:
                current = self.lock.get()
            except _REQUEST_ERRORS as e:
                if is_not_found(e):
                    log.log(V0, '"lease lock not found" lock="%s"', self.lock.describe())
                else:
                    log.error('"error retrieving resource lock" lock="%s" err=%s', self.lock.describe(),
                              quote(_message(e)))  # fmt: skip
                return False
            # client-go only looks at its own observation; the holder just read is checked too, so a
            # candidate that took over an expired lease is never cleared by the old leader
            if not self.is_leader() or current.holder_identity != self.identity:
                return True
            now = now_micro_time()
            record = LeaderElectionRecord(
                leader_transitions=current.leader_transitions, lease_duration_seconds=1, renew_time=now,
                acquire_time=now,
            )
            try:
                self.lock.update(record)
            except _REQUEST_ERRORS as e:
                if is_conflict(e) and time.monotonic() < deadline:
                    log.debug('"Conflict when releasing lease, retrying" lock="%s"', self.lock.describe())
                    continue
                log.error('"Failed to release lease" lock="%s" err=%s', self.lock.describe(), quote(_message(e)))
                return False
            self._set_observed(record)
            log.info('"Released lease" lock="%s"', self.lock.describe())
            return True

    def _try_acquire_or_renew(self) -> bool:
        """tryAcquireOrRenew: a renewal by the holder goes straight to an update of the Lease last
        seen; anything else reads the Lease first and takes it only when free or expired."""
        desc = self.lock.describe()
        now_wall = now_micro_time()
        record = LeaderElectionRecord(
            holder_identity=self.identity, lease_duration_seconds=int(self.config.lease_duration),
            renew_time=now_wall, acquire_time=now_wall,
        )
        if self.is_leader() and self._lease_valid(time.monotonic()):
            old = self._observed_record()
            fast = replace(record, acquire_time=old.acquire_time, leader_transitions=old.leader_transitions)
            try:
                self.lock.update(fast)
                self._set_observed(fast)
                return True
            except _REQUEST_ERRORS as e:
                log.debug('"Failed to update lease optimistically, falling back to slow path" lock="%s" err=%s',
                          desc, quote(_message(e)))  # fmt: skip

        try:
            old = self.lock.get()
        except _REQUEST_ERRORS as e:
            if not is_not_found(e):
                log.error('"Error retrieving lease lock" lock="%s" err=%s', desc, quote(_message(e)))
                return False
            try:
                self.lock.create(record)
            except _REQUEST_ERRORS as ce:
                log.error('"Error initially creating lease lock" lock="%s" err=%s', desc, quote(_message(ce)))
                return False
            self._set_observed(record)
            return True

        # the expiry clock restarts whenever the record changes: it is measured on this process's
        # clock from when the change was seen, never from the times written in the Lease
        if old != self._observed_read:
            self._set_observed(old)
            self._observed_read = old
        if old.holder_identity and self._lease_valid(time.monotonic()) and not self.is_leader():
            log.debug('"Lease is held by and has not yet expired" lock="%s" holder="%s"', desc, old.holder_identity)
            return False

        if self.is_leader():
            record = replace(record, acquire_time=old.acquire_time, leader_transitions=old.leader_transitions)
        else:
            record = replace(record, leader_transitions=old.leader_transitions + 1)
        try:
            self.lock.update(record)
        except _REQUEST_ERRORS as e:
            log.error('"Failed to update lease" lock="%s" err=%s', desc, quote(_message(e)))
            return False
        self._set_observed(record)
        return True

    def _maybe_report_transition(self) -> None:
        holder = self._observed_record().holder_identity
        if holder == self._reported_leader:
            return
        self._reported_leader = holder
        if self._on_new_leader is not None:
            threading.Thread(target=self._on_new_leader, args=(holder,), name="new-leader", daemon=True).start()


def _message(e: BaseException) -> str:
    """One line for logs: an ApiError's Status message, else the exception's text."""
    text = str(e) or type(e).__name__
    return text.splitlines()[0]


def _check_timing(c: LeaderElectionConfig) -> None:
    """NewLeaderElector's checks, with client-go's messages."""
    if c.lease_duration <= c.renew_deadline:
        raise ValueError("leaseDuration must be greater than renewDeadline")
    if c.renew_deadline <= JITTER_FACTOR * c.retry_period:
        raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
    if c.lease_duration <= 0:
        raise ValueError("leaseDuration must be greater than zero")
    if c.retry_period <= 0:
        raise ValueError("retryPeriod must be greater than zero")



__all__ = [
    "HEALTH_CHECK_NAME",
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "lock_client",
    "new_identity",
    "now_micro_time",
]
