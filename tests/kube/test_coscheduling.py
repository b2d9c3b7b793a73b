"""The Coscheduling guest (examples/coscheduling) under `wasmsched run` against a real kube-apiserver: the
PodGroup CRD as scheduler-plugins publishes it (vendored in examples/coscheduling/dev-cluster/, never
fetched) is installed, a Job's pods form a gang, and the scheduler reads PodGroups through the args' `watch`
(docs/abi.md §14.2). A gang with room for three of its four pods stays all-Pending (three wait at Permit);
adding a node binds all four, each once. With two replicas, kill -9 of the leader while the gang waits
loses no pod and binds no partial gang."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.go_guests import ROOT, build_example, builds_go
from wasmsched.api.errors import ApiError, is_already_exists
from wasmsched.devcluster import DevCluster
from wasmsched.kube.api import KubeApi

from .helpers import wait_for
from .run_helpers import (
    SchedulerProcess,
    bound_pods,
    create_node,
    events,
    lease,
    list_pods,
    node_json,
    scheduled_once,
    scheduler_config,
    unique,
)

CRD_FILE = ROOT / "examples" / "coscheduling" / "dev-cluster" / "podgroup-crd.yaml"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1"
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
EXAMPLE = ROOT / "examples" / "coscheduling"


@pytest.fixture(scope="module")
@builds_go
def guest() -> Path:
    return build_example("coscheduling")


@pytest.fixture(scope="module")
def podgroup_crd(dev_cluster: DevCluster) -> Iterator[None]:
    """The published PodGroup CRD, installed for this module (no other module uses the resource)."""
    api = dev_cluster.kube_api()
    try:
        try:
            api.request_json("POST", CRD_PATH, body=yaml.safe_load(CRD_FILE.read_text()))
        except ApiError as e:
            if not is_already_exists(e):
                raise

        def served() -> bool | None:
            try:
                api.request_json("GET", f"{PODGROUPS}/podgroups")
                return True
            except ApiError:
                return None  # 404 until the CRD is established, then 503 while its storage starts

        wait_for("the PodGroup CRD to be served", served, timeout=30)
        yield
    finally:
        api.close()



@pytest.fixture
def nodes(admin: KubeApi) -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for n in names:
        with contextlib.suppress(ApiError):
            admin.request("DELETE", f"/api/v1/nodes/{n}")


def add_node(admin: KubeApi, nodes: list[str], name: str, tag: str, cpu: str) -> None:
    create_node(admin, node_json(name, cpu=cpu, memory="16Gi", labels={"gang-test": tag}))
    nodes.append(name)


def config(tmp_path: Path, guest: Path, sched: str, lease_name: str = "") -> Path:
    # The example's profile (queueSort and multiPoint Coscheduling), a gap of one member in four (25%) left
    # to wait at Permit rather than rejected at once, and a long Permit wait: the gang waits for room.
    profile = yaml.safe_load((EXAMPLE / "scheduler.yaml").read_text())["profiles"][0]
    for pc in profile["pluginConfig"]:
        if pc["name"] == "Coscheduling":
            pc["args"]["guestURL"] = str(guest)
            pc["args"]["guestConfig"] = '{"permitWaitingTimeSeconds": 300, "podGroupRejectPercentage": 30}'
    extra = yaml.safe_dump({"plugins": profile["plugins"], "pluginConfig": profile["pluginConfig"]})
    return scheduler_config(tmp_path / "scheduler.yaml", sched, lease=lease_name,
                            extra_profile="".join(f"  {line}\n" for line in extra.splitlines()))


def pod_group(admin: KubeApi, namespace: str, name: str, min_member: int) -> None:
    admin.request_json("POST", f"{PODGROUPS}/namespaces/{namespace}/podgroups", body={
        "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": name},
        "spec": {"minMember": min_member}})


def job(admin: KubeApi, namespace: str, name: str, sched: str, tag: str, pods: int) -> None:
    """A Job of `pods` parallel pods, each a member of PodGroup `name` asking for one CPU."""
    res = {"cpu": "1", "memory": "100Mi"}
    admin.request_json("POST", f"/apis/batch/v1/namespaces/{namespace}/jobs", body={
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"parallelism": pods, "completions": pods, "backoffLimit": 0, "template": {
            "metadata": {"labels": {GROUP_LABEL: name}},
            "spec": {"schedulerName": sched, "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                     "nodeSelector": {"gang-test": tag},
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": res, "limits": dict(res)}}]}}}})


def gang_pods(admin: KubeApi, namespace: str, group: str) -> list[dict[str, Any]]:
    return [p for p in list_pods(admin, namespace) if p["metadata"].get("labels", {}).get(GROUP_LABEL) == group]


def waiting_at_permit(proc: SchedulerProcess) -> int:
    return proc.log().count("Pod is waiting to be scheduled to node")


def test_a_jobs_gang_waits_for_room_for_all_four_then_binds_all_four_once(
        admin: KubeApi, namespace: str, dev_cluster: DevCluster, podgroup_crd: None, guest: Path, nodes: list[str],
        tmp_path: Path) -> None:
    tag, sched = unique("gang"), unique("cosched")
    add_node(admin, nodes, f"{tag}-a", tag, cpu="3")  # three free slots for one-CPU pods
    proc = SchedulerProcess(tmp_path, dev_cluster.kubeconfig, config(tmp_path, guest, sched), "--leader-elect=false")
    try:
        pod_group(admin, namespace, "train", 4)
        job(admin, namespace, "train", sched, tag, 4)
        wait_for("the Job's four pods", lambda: len(gang_pods(admin, namespace, "train")) == 4 or None)
        # Three members fit and wait at Permit, the fourth does not: none is bound. (The scheduler compiles the
        # 18 MB guest first: generous on a loaded machine.)
        wait_for("three members waiting at Permit", lambda: waiting_at_permit(proc) >= 3 or None, timeout=180)
        assert bound_pods(admin, namespace) == {}, proc.log()
        names = sorted(p["metadata"]["name"] for p in gang_pods(admin, namespace, "train"))
        # The fourth member's failure is reported as kube reports it.
        failed = wait_for("a FailedScheduling event", lambda: [
            e for e in events(admin, namespace) if e["reason"] == "FailedScheduling"] or None)
        assert failed[0]["type"] == "Warning" and failed[0]["action"] == "Scheduling", failed[0]
        assert "Insufficient cpu" in failed[0]["note"], failed[0]
        assert bound_pods(admin, namespace) == {}
        # Room for the fourth: the whole gang is bound, each pod once.
        add_node(admin, nodes, f"{tag}-b", tag, cpu="3")
        wait_for("all four bound", lambda: len(bound_pods(admin, namespace)) == 4 or None, timeout=60)
        scheduled_once(admin, namespace, names)
        for e in events(admin, namespace):
            if e["reason"] == "Scheduled":
                pod, node = e["regarding"]["name"], bound_pods(admin, namespace)[e["regarding"]["name"]]
                assert e["type"] == "Normal" and e["action"] == "Binding", e
                assert e["note"] == f"Successfully assigned {namespace}/{pod} to {node}", e
        assert proc.alive(), proc.log()
        assert "Traceback" not in proc.log()
    finally:
        proc.stop()


def test_kill_9_of_the_leader_while_a_gang_waits_loses_no_pod_and_binds_no_partial_gang(
        admin: KubeApi, namespace: str, dev_cluster: DevCluster, podgroup_crd: None, guest: Path, nodes: list[str],
        tmp_path: Path) -> None:
    tag, sched, lease_name = unique("gang"), unique("cosched"), unique("lease")
    add_node(admin, nodes, f"{tag}-a", tag, cpu="3")
    cfg = config(tmp_path, guest, sched, lease_name)  # 4 s lease
    a = SchedulerProcess(tmp_path, dev_cluster.kubeconfig, cfg, name="a")
    b = SchedulerProcess(tmp_path, dev_cluster.kubeconfig, cfg, name="b")
    try:
        # Each replica compiles the 18 MB guest before it campaigns: generous on a loaded machine.
        holder = wait_for("a leader", lambda: (lease(admin, lease_name) or {}).get("spec", {}).get("holderIdentity"),
                          timeout=180)
        wait_for("the leader's log", lambda: any("successfully acquired lease" in p.log().lower() for p in (a, b)))
        leader, follower = (a, b) if "successfully acquired lease" in a.log().lower() else (b, a)
        pod_group(admin, namespace, "mpi", 4)
        job(admin, namespace, "mpi", sched, tag, 4)
        wait_for("three members waiting at the leader's Permit", lambda: waiting_at_permit(leader) >= 3 or None,
                 timeout=60)
        assert bound_pods(admin, namespace) == {}
        leader.stop(signal.SIGKILL)  # the three it holds at Permit exist only in its memory
        wait_for("the follower to take over", lambda: (h := (lease(admin, lease_name) or {}).get(
            "spec", {}).get("holderIdentity")) != holder and h)
        wait_for("three members waiting at the new leader's Permit", lambda: waiting_at_permit(follower) >= 3 or None,
                 timeout=60)
        assert bound_pods(admin, namespace) == {}  # still no partial gang
        add_node(admin, nodes, f"{tag}-b", tag, cpu="3")
        wait_for("all four bound", lambda: len(bound_pods(admin, namespace)) == 4 or None, timeout=60)
        names = sorted(p["metadata"]["name"] for p in gang_pods(admin, namespace, "mpi"))
        assert len(names) == 4  # no pod lost (the Job made no replacement either)
        scheduled_once(admin, namespace, names)
        assert follower.alive(), follower.log()
        assert "Traceback" not in follower.log()
    finally:
        a.stop()
        b.stop()
