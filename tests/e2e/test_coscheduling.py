"""The Coscheduling guest (examples/coscheduling: scheduler-plugins' Coscheduling as a wasm plugin) in
`simulate`: all of a PodGroup's pods or none. The guest reads PodGroups from the manifests (docs/abi.md
§14.2), gates incomplete groups in PreEnqueue, orders the queue by gang (§15.2), holds members at Permit
and allows or rejects them together (§15.3), and keeps its bookkeeping across pods in one shared
instance (§15.6). Each test has a control (the same cluster without the plugin, or the numbers that show
what a partial gang would look like), so it fails if the gang were not held together."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.helpers import run_cli
from tests.go_guests import ROOT, build_example, builds_go
from wasmsched.cli import simulate as simulate_cli
from wasmsched.simulator.simulation import Simulation

EXAMPLE = ROOT / "examples" / "coscheduling"
GUEST = EXAMPLE / "coscheduling.wasm"
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


@pytest.fixture(scope="session")
@builds_go
def guest_built() -> None:
    build_example("coscheduling")


@pytest.fixture(autouse=True)
def built(guest_built: None) -> None:
    """Every test here loads the guest."""


def config(tmp_path: Path, **guest_config: Any) -> Path:
    """A profile with Coscheduling as the guest is configured in examples/coscheduling/scheduler.yaml, with
    guest_config as its guestConfig."""
    cfg = yaml.safe_load((EXAMPLE / "scheduler.yaml").read_text())
    for pc in cfg["profiles"][0]["pluginConfig"]:
        if pc["name"] == "Coscheduling":
            pc["args"]["guestURL"] = str(GUEST)
            pc["args"]["guestConfig"] = json.dumps(guest_config)
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def node(name: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                       "capacity": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def pod(name: str, group: str | None, cpu: str = "1", priority_class: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if group is not None:
        meta["labels"] = {GROUP_LABEL: group}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": cpu}}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value}


def pod_group(name: str, min_member: int, created: str = "2026-12-01T00:00:00Z",
              timeout: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": created}, "spec": spec}


def manifests(tmp_path: Path, objects: list[dict[str, Any]], name: str = "cluster.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objects))
    return path


def simulate(capsys: pytest.CaptureFixture[str], cluster: Path, cfg: Path | None) -> dict[str, dict[str, Any]]:
    rc, out, err = run_cli(capsys, "simulate", "-o", "json", *(["--config", str(cfg)] if cfg else []), str(cluster))
    assert rc == 0, err
    assert "Traceback" not in err
    doc = json.loads(out)
    return {p["name"]: {**p, "events": [e for e in doc["events"] if e["regarding"] == f"default/{p['name']}"]}
            for p in doc["pods"]}


def bound(result: dict[str, dict[str, Any]], prefix: str = "") -> list[str]:
    return sorted(n for n, p in result.items() if n.startswith(prefix) and p["phase"] == "Scheduled")


def simulation(cfg: Path, cluster: Path) -> Simulation:
    """The Simulation `wasmsched simulate --config CFG CLUSTER` runs, to drive step by step."""
    parser = argparse.ArgumentParser()
    simulate_cli.add_arguments(parser)
    sim, warnings = simulate_cli._build(parser.parse_args(["--config", str(cfg), str(cluster)]))
    assert not warnings, warnings
    return sim


# ----- 1. all or nothing -------------------------------------------------------------------------


def test_a_gang_with_room_for_two_of_its_three_pods_binds_none(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    objects = [node("n1", "1"), node("n2", "1"), pod_group("pg", 3), *(pod(f"p{i}", "pg") for i in range(3))]
    cluster = manifests(tmp_path, objects)
    # Control: without the plugin two of the three are bound.
    assert len(bound(simulate(capsys, cluster, None))) == 2
    result = simulate(capsys, cluster, config(tmp_path))
    assert bound(result) == []
    for name, p in result.items():
        assert p["phase"] == "Unschedulable", (name, p)
        assert "PodGroup default/pg" in p["message"] or "rejection" in p["message"], (name, p["message"])
    messages = " | ".join(p["message"] for p in result.values())
    assert "PodGroup default/pg gets rejected due to Pod" in messages and "is unschedulable even after PostFilter" \
        in messages, messages


def test_room_for_the_whole_gang_binds_all_of_it_in_one_go(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    objects = [node("n1", "1"), node("n2", "1"), node("big", "4"), pod_group("pg", 3),
               *(pod(f"p{i}", "pg") for i in range(3))]
    result = simulate(capsys, manifests(tmp_path, objects), config(tmp_path))
    assert bound(result) == ["p0", "p1", "p2"]
    # In one go: each member was attempted once, none was rejected on the way.
    assert [p["attempts"] for p in result.values()] == [1, 1, 1]
    for p in result.values():
        assert [e["reason"] for e in p["events"]] == ["Scheduled"], p["events"]


def test_two_gangs_competing_for_room_for_one_bind_exactly_one_of_them(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    # Room for three one-CPU pods; the members are listed interleaved.
    objects: list[dict[str, Any]] = [node("n1", "2"), node("n2", "1"), pod_group("a", 3, "2026-12-01T00:00:00Z"),
                                     pod_group("b", 3, "2026-12-01T00:00:01Z")]
    for i in range(3):
        objects += [pod(f"b{i}", "b"), pod(f"a{i}", "a")]
    cluster = manifests(tmp_path, objects)
    assert len(bound(simulate(capsys, cluster, None))) == 3  # control: some three of the six
    result = simulate(capsys, cluster, config(tmp_path))
    a, b = bound(result, "a"), bound(result, "b")
    # The older gang first (QueueSort), all of it; none of the other, which waits.
    assert (a, b) == (["a0", "a1", "a2"], []), (a, b)
    for name in ("b0", "b1", "b2"):
        assert result[name]["phase"] == "Unschedulable", result[name]


# ----- 2. Permit timeout -------------------------------------------------------------------------


def test_a_gang_that_cannot_complete_times_out_releases_its_room_and_is_retried(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # minMember 10 and room for 9: the tenth member's PostFilter leaves the others waiting (a gap of 10% is
    # within the default podGroupRejectPercentage), so they wait at Permit until permitWaitingTimeSeconds.
    objects = [node("n1", "5"), node("n2", "4"), pod_group("pg", 10),
               *(pod(f"m{i}", "pg") for i in range(10)),
               # not in the gang, created with it (and sorted after it: the PodGroup is older than its first
               # attempt); no room for it while the gang holds nine CPUs
               pod("other", None, cpu="1")]
    result = simulate(capsys, manifests(tmp_path, objects), config(tmp_path, permitWaitingTimeSeconds=5))
    # Nine members waited 5 s on the simulated clock, were rejected together and released their CPUs...
    timeouts = [m for m in result.values() if any(
        "rejected due to timeout after waiting 5s at plugin Coscheduling" in e["message"] for e in m["events"])]
    assert len(timeouts) >= 9, {n: p["events"] for n, p in result.items()}
    # ...so the other pod fitted after them,
    assert result["other"]["phase"] == "Scheduled", result["other"]
    # and the gang was retried (its members attempted again after their backoff) and never bound in part.
    members = {n: p for n, p in result.items() if n.startswith("m")}
    assert bound(members) == []
    assert all(p["attempts"] >= 2 for p in members.values()), {n: p["attempts"] for n, p in members.items()}


# ----- 3. QueueSort ------------------------------------------------------------------------------


def test_members_of_a_gang_are_popped_back_to_back_by_priority_then_creation_time(tmp_path: Path) -> None:
    objects: list[dict[str, Any]] = [node("n1", "64"), priority_class("high", 100), priority_class("mid", 10),
                                     pod_group("old", 2, "2026-12-01T00:00:00Z"),
                                     pod_group("new", 2, "2026-12-01T00:05:00Z"),
                                     pod_group("vip", 2, "2026-12-01T00:09:00Z")]
    # Listed interleaved, as a Job controller would create the pods of several jobs at once.
    for i in range(2):
        objects += [pod(f"new{i}", "new", priority_class="mid"), pod(f"plain{i}", None, priority_class="mid"),
                    pod(f"vip{i}", "vip", priority_class="high"), pod(f"old{i}", "old", priority_class="mid")]
    sim = simulation(config(tmp_path), manifests(tmp_path, objects))
    order: list[str] = []
    sim.scheduler.attempt_observer = lambda pod, *_: order.append(pod.metadata.name)
    result = sim.run_until_quiet()
    assert all(p.phase == "Scheduled" for p in result.pods), [(p.name, p.phase, p.message) for p in result.pods]
    gangs = [name.rstrip("01") for name in order]
    # Priority first (vip), then the gangs by their PodGroup's creation time; a pod without a group by its
    # own (its first attempt's) time, which is later than every PodGroup's here.
    assert gangs == ["vip", "vip", "old", "old", "new", "new", "plain", "plain"], order


# ----- 5. a member deleted while the others wait --------------------------------------------------


def test_a_member_deleted_while_the_others_wait_at_permit_rejects_and_requeues_them(tmp_path: Path) -> None:
    # minMember 3, and the third member is not there yet: PreEnqueue lets the two in only once three exist,
    # so the gang has a fourth pod, which cannot fit (it needs a CPU nobody has) yet counts for the quorum.
    objects = [node("n1", "2"), node("n2", "1"), pod_group("pg", 3),
               pod("w0", "pg"), pod("w1", "pg"), pod("w2", "pg", cpu="8")]
    cfg = config(tmp_path, permitWaitingTimeSeconds=600, podGroupRejectPercentage=40)
    sim = simulation(cfg, manifests(tmp_path, objects))
    s = sim.scheduler
    # Schedule until two members wait at Permit (w2 fails and, within the 40% allowed gap, rejects nobody).
    for _ in range(20):
        if not s.schedule_one():
            break
    fwk = next(iter(s.profiles.values()))
    waiting = sorted(wp.get_pod().metadata.name for wp in fwk.waiting_pods.all())
    assert waiting == ["w0", "w1"], waiting
    # Delete w0 while it waits: its Permit is rejected, its Unreserve rejects w1, both requeued.
    sim.cluster.delete("Pod", "default/w0")
    s.binding_workers.run_deferred()
    assert len(fwk.waiting_pods) == 0
    pending = s.queue.pending_pods()
    queued = {q.pod.metadata.name for q in (*pending["active"], *pending["backoff"], *pending["unschedulable"])}
    assert "w1" in queued, pending
    w1 = sim.cluster.get("Pod", "default/w1")
    assert w1 is not None and not w1.spec.nodeName
    rec = s.records.of(w1)
    assert "rejection in Unreserve" in rec.message, rec.message


def test_the_guest_and_priority_sort_both_sorting_the_queue_is_kubes_error(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    cfg = yaml.safe_load(config(tmp_path).read_text())
    del cfg["profiles"][0]["plugins"]["queueSort"]["disabled"]  # PrioritySort stays enabled beside it
    path = tmp_path / "two-sorts.yaml"
    path.write_text(yaml.safe_dump(cfg))
    rc, out, err = run_cli(capsys, "simulate", "--config", str(path), str(EXAMPLE / "cluster"))
    assert (rc, out) == (2, "")
    # framework/runtime/framework.go's NewFramework
    assert err == (f'error: {path}: profile "default-scheduler": only one queue sort plugin required for profile '
                   'with scheduler name "default-scheduler", but got 2\n')


def test_a_pod_the_guest_gates_is_reported_with_the_gates_message(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    # Two pods of a PodGroup of three: PreEnqueue keeps both out of the queue; simulate reports its message.
    objects = [node("n1", "8"), pod_group("pg", 3), pod("p0", "pg"), pod("p1", "pg")]
    result = simulate(capsys, manifests(tmp_path, objects), config(tmp_path))
    for p in result.values():
        assert (p["phase"], p["attempts"]) == ("Unschedulable", 0), p
        assert p["message"] == "waiting for minCount pods from a gang to appear in scheduling queue", p
