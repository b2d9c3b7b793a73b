"""Leader election's pure logic: the configuration section, client-go's timing checks, the Lease
spec a record becomes, identities and MicroTime (tests/kube/test_leaderelection.py runs electors
against an API server)."""

from __future__ import annotations

import re
import socket
import threading

import pytest
from kubernetes.client import ApiClient

from wasmsched.config.errors import ConfigError
from wasmsched.kube.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    new_identity,
    now_micro_time,
)


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
        LeaderElector(ApiClient(), cfg, "me", lambda _: None, lambda: None)


def test_elector_needs_an_identity() -> None:
    with pytest.raises(ValueError, match="Lock identity is empty"):
        LeaderElector(ApiClient(), LeaderElectionConfig(), "", lambda _: None, lambda: None)


def test_not_leader_before_running_and_healthy() -> None:
    le = LeaderElector(ApiClient(), LeaderElectionConfig(), "me", lambda _: None, lambda: None)
    assert not le.is_leader()
    assert le.check() is None
    assert le.get_leader() == ""


def test_stop_before_acquiring_still_calls_on_stopped_leading() -> None:
    # client-go defers OnStoppedLeading in Run: it runs even when the lease was never acquired
    stopped = []
    le = LeaderElector(ApiClient(), LeaderElectionConfig(), "me", lambda _: None, lambda: stopped.append(1))
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
