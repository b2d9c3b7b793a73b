"""Leader election's pure logic: the configuration section, client-go's timing checks, the Lease
spec a record becomes, identities and MicroTime (tests/kube/test_leaderelection.py runs electors
against an API server)."""

from __future__ import annotations

import re
import socket
import threading
from typing import Any, cast

import pytest
from kubernetes import client as kclient

from wasmsched.api.errors import ApiError, TransportError
from wasmsched.config.errors import ConfigError
from wasmsched.kube.api import ClientConnection, KubeApi
from wasmsched.kube.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    lock_client,
    new_identity,
    now_micro_time,
)


def _api() -> KubeApi:
    """A client that points nowhere: these tests make no request."""
    return KubeApi(kclient.Configuration(host="https://127.0.0.1:1"))


def test_defaults_are_kube_schedulers() -> None:
    for cfg in (LeaderElectionConfig(), LeaderElectionConfig.from_dict(None), LeaderElectionConfig.from_dict({})):
        assert cfg == LeaderElectionConfig(
            leader_elect=True, lease_duration=15.0, renew_deadline=10.0, retry_period=2.0, resource_lock="leases",
            resource_name="kube-scheduler", resource_namespace="kube-system",
        )


def test_from_dict_parses_go_durations_and_names() -> None:
    cfg = LeaderElectionConfig.from_dict({
        "leaderElect": True, "leaseDuration": "1m", "renewDeadline": "30s", "retryPeriod": "1.5s",
        "resourceName": "wasmsched", "resourceNamespace": "sched",
    })
    assert (cfg.lease_duration, cfg.renew_deadline, cfg.retry_period) == (60.0, 30.0, 1.5)
    assert (cfg.resource_name, cfg.resource_namespace, cfg.resource_lock) == ("wasmsched", "sched", "leases")


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"leaseDuration": "15"}, 'leaderElection.leaseDuration: Invalid value: "15": time: '),
        ({"retryPeriod": "2 s"}, "leaderElection.retryPeriod: Invalid value"),
        ({"leaseDuration": 15}, "leaderElection.leaseDuration: Invalid value: 15: cannot unmarshal number"),
        ({"leaseDuration": "10s"},
         'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`'),
        ({"retryPeriod": "0s"}, 'leaderElection.retryPeriod: Invalid value: "0s": must be greater than zero'),
        ({"resourceLock": "endpoints"}, 'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value'),
        ({"resourceName": ""}, "leaderElection.resourceName: Required value"),
        ({"resourceNamspace": "x"}, 'unknown field "leaderElection.resourceNamspace"'),
        ({"leaderElect": "yes"}, "leaderElection.leaderElect"),
    ],
)
def test_from_dict_errors_name_the_field(section: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        LeaderElectionConfig.from_dict(section)
    assert message in str(e.value)


def test_disabled_election_is_not_validated() -> None:
    cfg = LeaderElectionConfig.from_dict({"leaderElect": False, "leaseDuration": "1s"})
    assert not cfg.leader_elect


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        (LeaderElectionConfig(lease_duration=10, renew_deadline=10),
         "leaseDuration must be greater than renewDeadline"),
        (LeaderElectionConfig(renew_deadline=2.4, retry_period=2),
         "renewDeadline must be greater than retryPeriod*JitterFactor"),
        (LeaderElectionConfig(retry_period=0), "retryPeriod must be greater than zero"),
    ],
)
def test_elector_refuses_client_go_invalid_timings(cfg: LeaderElectionConfig, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        LeaderElector(_api(), cfg, "me", lambda _: None, lambda: None)


def test_elector_needs_an_identity() -> None:
    with pytest.raises(ValueError, match="Lock identity is empty"):
        LeaderElector(_api(), LeaderElectionConfig(), "", lambda _: None, lambda: None)


def test_not_leader_before_running_and_healthy() -> None:
    le = LeaderElector(_api(), LeaderElectionConfig(), "me", lambda _: None, lambda: None)
    assert not le.is_leader()
    assert le.check() is None
    assert le.get_leader() == ""


def test_stop_before_acquiring_still_calls_on_stopped_leading() -> None:
    # client-go defers OnStoppedLeading in Run: it runs even when the lease was never acquired
    stopped = []
    le = LeaderElector(_api(), LeaderElectionConfig(), "me", lambda _: None, lambda: stopped.append(1))
    stop = threading.Event()
    stop.set()
    le.run(stop)
    assert stopped == [1]


def test_record_to_lease_spec_as_client_go_writes_it() -> None:
    r = LeaderElectionRecord(holder_identity="h_1", lease_duration_seconds=15,
                             acquire_time="2026-01-02T03:04:05.000006Z", renew_time="2026-01-02T03:04:07.000000Z",
                             leader_transitions=3)
    spec = r.to_lease_spec()
    assert spec == {"holderIdentity": "h_1", "leaseDurationSeconds": 15, "acquireTime": "2026-01-02T03:04:05.000006Z",
                    "renewTime": "2026-01-02T03:04:07.000000Z", "leaseTransitions": 3}
    assert LeaderElectionRecord.from_lease_spec(spec) == r
    # a released lease keeps an empty holder written explicitly
    assert LeaderElectionRecord(lease_duration_seconds=1).to_lease_spec()["holderIdentity"] == ""


def test_identity_and_micro_time_formats() -> None:
    ident = new_identity()
    host, _, uid = ident.rpartition("_")
    assert host == socket.gethostname()
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", uid)
    assert new_identity() != ident
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", now_micro_time())


class FakeLeaseServer:
    """KubeApi.request_json for one Lease: `answers` (per method) are raised in turn before the server
    behaves; every call is recorded with its timeout."""

    def __init__(self, answers: dict[str, list[Exception]] | None = None) -> None:
        self.lease: dict[str, Any] | None = None
        self.rv = 0
        self.answers = answers or {}
        self.calls: list[tuple[str, Any]] = []

    def request_json(self, method: str, path: str, *, body: Any = None, timeout: Any = None, **_: Any) -> Any:
        self.calls.append((method, timeout))
        pending = self.answers.get(method)
        if pending:
            raise pending.pop(0)
        if method == "GET":
            if self.lease is None:
                raise ApiError(404, "NotFound", 'leases.coordination.k8s.io "wasmsched" not found')
            return self.lease
        if method == "POST" and self.lease is not None:
            raise ApiError(409, "AlreadyExists", 'leases.coordination.k8s.io "wasmsched" already exists')
        if method == "PUT" and body["metadata"].get("resourceVersion") != str(self.rv):
            raise ApiError(409, "Conflict", "the object has been modified")
        self.rv += 1
        self.lease = {**body, "metadata": {**body["metadata"], "resourceVersion": str(self.rv)}}
        return self.lease


def _elector(server: FakeLeaseServer, **kw: Any) -> LeaderElector:
    cfg = LeaderElectionConfig(resource_name="wasmsched", resource_namespace="ns", lease_duration=15.0,
                               renew_deadline=10.0, retry_period=2.0)
    return LeaderElector(cast(Any, server), cfg, "me", lambda _: None, lambda: None, **kw)


def test_a_missing_lease_is_created_and_every_request_carries_the_lock_timeout() -> None:
    server = FakeLeaseServer()
    le = _elector(server)
    assert le._try_acquire_or_renew()
    assert le.is_leader()
    # NotFound on the read (is_not_found) leads to the create; client-go gives the lock renewDeadline/2
    assert server.calls == [("GET", 5.0), ("POST", 5.0)]


def test_a_refused_or_unreachable_read_is_a_failed_attempt_not_a_create() -> None:
    for err in (ApiError(403, "Forbidden", "leases is forbidden"), TransportError("connection refused"),
                ApiError(404, "Gone-ish", "")):  # a 404 of a reason kube does not know is still NotFound
        server = FakeLeaseServer({"GET": [err]})
        le = _elector(server)
        created = le._try_acquire_or_renew()
        if isinstance(err, ApiError) and err.status == 404:
            assert created and [m for m, _ in server.calls] == ["GET", "POST"]
        else:
            assert not created and [m for m, _ in server.calls] == ["GET"]


def test_release_retries_a_conflict_and_gives_up_on_anything_else() -> None:
    server = FakeLeaseServer()
    le = _elector(server)
    assert le._try_acquire_or_renew()
    # a renewal by someone else's write in between: the release's update conflicts once, then succeeds
    server.answers["PUT"] = [ApiError(409, "Conflict", "the object has been modified")]
    assert le.release()
    assert server.lease is not None and server.lease["spec"]["holderIdentity"] == ""
    server2 = FakeLeaseServer()
    le2 = _elector(server2)
    assert le2._try_acquire_or_renew()
    server2.answers["PUT"] = [ApiError(422, "Invalid", "spec.leaseDurationSeconds: Invalid value")]
    assert not le2.release()
    assert server2.lease is not None and server2.lease["spec"]["holderIdentity"] == "me"


def test_the_lock_has_a_client_of_its_own() -> None:
    api = KubeApi(kclient.Configuration(host="https://127.0.0.1:1"), ClientConnection(qps=5, burst=10))
    own = lock_client(api)
    try:
        assert own is not api and own.api_client is not api.api_client and own._limiter is not api._limiter
        assert own.configuration is api.configuration and own.connection == api.connection
    finally:
        own.close()
        api.close()
