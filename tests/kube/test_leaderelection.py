"""Leader election against a real kube-apiserver: two candidates on one Lease, takeover after a crash
(lease expiry) or at once after a release, giving up when renewals fail, the lease fields as
client-go writes them, and the healthz watchdog."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from wasmsched.api.errors import ApiError, is_conflict
from wasmsched.api.wellknown import parse_rfc3339
from wasmsched.devcluster import DevCluster
from wasmsched.kube.api import KubeApi
from wasmsched.kube.leaderelection import LeaderElectionConfig, LeaderElector, lock_client, new_identity

from .helpers import wait_for

# short terms so that expiry happens within a test; client-go's constraints hold
# (leaseDuration > renewDeadline > 1.2 * retryPeriod)
SHORT = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.5}


@dataclass
class Candidate:
    elector: LeaderElector
    stop: threading.Event
    thread: threading.Thread
    started: threading.Event = field(default_factory=threading.Event)
    leading: list[threading.Event] = field(default_factory=list)
    stopped: threading.Event = field(default_factory=threading.Event)

    @property
    def identity(self) -> str:
        return self.elector.identity


class Campaign:
    """Candidates for one Lease, each running `LeaderElector.run` on its own thread."""

    def __init__(self, api: KubeApi, namespace: str) -> None:
        self.api = api
        self.namespace = namespace
        self.candidates: list[Candidate] = []
        self.clients: list[KubeApi] = []

    def config(self, **timing: float) -> LeaderElectionConfig:
        return LeaderElectionConfig(resource_namespace=self.namespace, resource_name="wasmsched",
                                    **{**SHORT, **timing})  # type: ignore[arg-type]

    def candidate(self, release_on_cancel: bool = True, healthz_timeout: float = 20.0, **timing: float) -> Candidate:
        started, stopped = threading.Event(), threading.Event()
        leading: list[threading.Event] = []

        def on_started(ev: threading.Event) -> None:
            leading.append(ev)
            started.set()

        # each candidate's lock has a client of its own, as in its own process
        lock_api = lock_client(self.api)
        self.clients.append(lock_api)
        elector = LeaderElector(lock_api, self.config(**timing), new_identity(), on_started, stopped.set,
                                release_on_cancel=release_on_cancel, healthz_timeout=healthz_timeout)
        stop = threading.Event()
        thread = threading.Thread(target=elector.run, args=(stop,), daemon=True)
        c = Candidate(elector, stop, thread, started, leading, stopped)
        self.candidates.append(c)
        thread.start()
        return c

    def lease(self) -> dict[str, Any]:
        return self.api.request_json(  # type: ignore[no-any-return]
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/wasmsched")

    def close(self) -> None:
        for c in self.candidates:
            c.stop.set()
        for c in self.candidates:
            c.thread.join(timeout=60)
        for api in self.clients:
            api.close()


@pytest.fixture
def campaign(dev_cluster: DevCluster, namespace: str) -> Iterator[Campaign]:
    with dev_cluster.kube_api() as api:
        camp = Campaign(api, namespace)
        try:
            yield camp
        finally:
            camp.close()


def _seconds(micro_time: str) -> float:
    s, ns = parse_rfc3339(micro_time)
    return s + ns / 1e9


def _leader(a: Candidate, b: Candidate) -> tuple[Candidate, Candidate] | None:
    if a.started.is_set():
        return a, b
    if b.started.is_set():
        return b, a
    return None


def _take_over(campaign: Campaign, holder: str) -> bool:
    """Write another holder into the lease; False on a conflict with a concurrent renewal."""
    lease = campaign.lease()
    lease["spec"].update({"holderIdentity": holder, "leaseDurationSeconds": 3600})
    try:
        campaign.api.request_json(
            "PUT", f"/apis/coordination.k8s.io/v1/namespaces/{campaign.namespace}/leases/wasmsched", body=lease)
    except ApiError as e:
        if is_conflict(e):
            return False
        raise
    return True


def test_two_candidates_one_leader_and_client_go_lease_fields(campaign: Campaign) -> None:
    a, b = campaign.candidate(), campaign.candidate()
    leader, other = wait_for("a leader", lambda: _leader(a, b))
    first = campaign.lease()
    spec = first["spec"]
    assert spec["holderIdentity"] == leader.identity
    assert spec["leaseDurationSeconds"] == 3
    assert spec["leaseTransitions"] == 0  # created by the first leader
    assert spec["acquireTime"].endswith("Z") and len(spec["acquireTime"]) == len("2026-01-02T03:04:05.000000Z")
    # renewals move renewTime and keep acquireTime, holder and transitions
    renewed = wait_for("a renewal", lambda: (
        (lease := campaign.lease())["spec"]["renewTime"] > spec["renewTime"] and lease))
    assert renewed["spec"]["acquireTime"] == spec["acquireTime"]
    assert renewed["spec"]["holderIdentity"] == leader.identity
    assert renewed["spec"]["leaseTransitions"] == 0
    # the other candidate (its create may have lost the race) reads the lease and stays a follower
    wait_for("the other to observe the leader", lambda: other.elector.get_leader() == leader.identity)
    assert leader.elector.is_leader() and not other.elector.is_leader()
    assert not other.started.is_set()


def test_a_crashed_leaders_lease_is_taken_after_it_expires(campaign: Campaign) -> None:
    a = campaign.candidate(release_on_cancel=False)
    wait_for("a to lead", a.started.is_set)
    b = campaign.candidate()
    wait_for("b to see a as leader", lambda: b.elector.get_leader() == a.identity)
    a.stop.set()  # renewals stop; the lease is not released, as when a process dies
    wait_for("a to stop", a.stopped.is_set)
    last_renew = _seconds(campaign.lease()["spec"]["renewTime"])
    assert campaign.lease()["spec"]["holderIdentity"] == a.identity
    wait_for("b to lead", b.started.is_set)
    spec = campaign.lease()["spec"]
    assert spec["holderIdentity"] == b.identity
    assert spec["leaseTransitions"] == 1
    # b waited for the lease to expire: leaseDuration after a's last renewal at the earliest
    assert _seconds(spec["acquireTime"]) - last_renew >= 3.0


def test_release_on_clean_stop_hands_over_at_once(campaign: Campaign) -> None:
    # a long lease: the handover must not wait for it to expire
    a = campaign.candidate(lease_duration=30.0)
    wait_for("a to lead", a.started.is_set)
    b = campaign.candidate(lease_duration=30.0)
    wait_for("b to see a as leader", lambda: b.elector.get_leader() == a.identity)
    last_renew = _seconds(campaign.lease()["spec"]["renewTime"])
    a.stop.set()
    wait_for("a to stop", a.stopped.is_set)
    assert a.leading[0].is_set()  # the leader's work was told to stop
    assert not a.elector.is_leader()
    wait_for("b to lead", b.started.is_set)
    spec = campaign.lease()["spec"]
    assert spec["holderIdentity"] == b.identity
    assert spec["leaseTransitions"] == 1
    # without the release b would wait for the 30 s lease to expire
    assert _seconds(spec["acquireTime"]) - last_renew < 30.0


def test_release_writes_an_empty_holder_and_a_one_second_lease(campaign: Campaign) -> None:
    a = campaign.candidate()
    wait_for("a to lead", a.started.is_set)
    a.stop.set()
    wait_for("a to stop", a.stopped.is_set)
    spec = campaign.lease()["spec"]
    assert spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == 0
    assert spec["acquireTime"] == spec["renewTime"]


def test_leader_gives_up_when_it_cannot_renew(campaign: Campaign) -> None:
    a = campaign.candidate()
    wait_for("a to lead", a.started.is_set)
    # someone else takes the lease over: a's renewals now fail (its resourceVersion is stale and the
    # lease is held by another, unexpired)
    wait_for("the lease taken over", lambda: _take_over(campaign, "intruder"))
    wait_for("a to give up after renewDeadline", a.stopped.is_set)
    assert a.leading[0].is_set()
    assert not a.elector.is_leader()
    # releasing never clears a lease another holder took
    assert campaign.lease()["spec"]["holderIdentity"] == "intruder"


def test_watchdog_fails_when_the_leader_stopped_renewing(campaign: Campaign) -> None:
    a = campaign.candidate(release_on_cancel=False, healthz_timeout=0.0)
    wait_for("a to lead", a.started.is_set)
    assert a.elector.check() is None
    a.stop.set()
    wait_for("a to stop", a.stopped.is_set)
    # it still believes it leads (nothing was released) but its lease ran out
    reason = wait_for("the watchdog to fail", a.elector.check)
    assert reason == "failed election to renew leadership on lease wasmsched"
