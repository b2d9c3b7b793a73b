"""`wasmsched run` against a real kube-apiserver (dev-cluster): binding, failures, preemption, bad input."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.go_guests import ROOT
from wasmsched.devcluster.kubeconfig import write_kubeconfig
from wasmsched.devcluster.processes import free_port
from wasmsched.kube.api import ApiError, KubeApi

from .helpers import wait_for
from .run_helpers import (
    PodHistory,
    SchedulerProcess,
    bound_pods,
    condition,
    create,
    create_node,
    create_pod,
    events,
    get_pod,
    https_get,
    kube_api,
    lease,
    node_json,
    pod_json,
    scheduled_once,
    scheduler_config,
    unique,
    wait_bound,
)


class Nodes:
    """Creates nodes for one test and deletes them after it, so the next test sees only its own."""

    def __init__(self, api: KubeApi) -> None:
        self.api = api
        self.names: list[str] = []

    def add(self, name: str, **kw: Any) -> str:
        create_node(self.api, node_json(name, **kw))
        self.names.append(name)
        return name

    def cleanup(self) -> None:
        for n in self.names:
            with contextlib.suppress(ApiError):
                self.api.request("DELETE", f"/api/v1/nodes/{n}")


@pytest.fixture
def nodes(admin: KubeApi) -> Iterator[Nodes]:
    n = Nodes(admin)
    yield n
    n.cleanup()


@pytest.fixture
def run_scheduler(dev_cluster: Any, tmp_path: Path) -> Iterator[Any]:
    started: list[SchedulerProcess] = []

    def start(config: Path | None, *extra: str, kubeconfig: Any = None, name: str = "sched") -> SchedulerProcess:
        p = SchedulerProcess(tmp_path, kubeconfig or dev_cluster.kubeconfig, config, *extra, name=name)
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()


def test_pods_are_bound_with_scheduled_events_and_condition(admin: KubeApi, namespace: str, nodes: Nodes,
                                                            run_scheduler: Any, tmp_path: Path) -> None:
    sched = unique("sched")
    for i in range(3):
        nodes.add(unique(f"n{i}"))
    names = [f"p{i}" for i in range(6)]
    for n in names:
        create_pod(admin, namespace, pod_json(n, sched))
    proc = run_scheduler(scheduler_config(tmp_path / "cfg.yaml", sched))
    bound = wait_bound(admin, namespace, 6)
    assert set(bound.values()) <= set(nodes.names)
    for n in names:
        pod = get_pod(admin, namespace, n)
        assert pod is not None
        cond = condition(pod, "PodScheduled")
        assert cond is not None and cond["status"] == "True", pod["status"]
    evs = wait_for("6 Scheduled events", lambda: [e for e in events(admin, namespace) if e["reason"] == "Scheduled"]
                   if len([e for e in events(admin, namespace) if e["reason"] == "Scheduled"]) == 6 else None)
    for e in evs:
        pod_name = e["regarding"]["name"]
        assert e["note"] == f"Successfully assigned {namespace}/{pod_name} to {bound[pod_name]}"
        assert e["reportingController"] == sched and e["action"] == "Binding" and e["type"] == "Normal"
        assert e["regarding"]["kind"] == "Pod" and e["regarding"]["uid"]
    assert proc.alive(), proc.log()
    assert "Traceback" not in proc.log()


def test_unschedulable_pod_gets_kubes_message_then_lands_on_a_new_node(
        admin: KubeApi, namespace: str, nodes: Nodes, run_scheduler: Any, tmp_path: Path) -> None:
    sched = unique("sched")
    nodes.add(unique("small"), cpu="1")
    nodes.add(unique("small"), cpu="1")
    proc = run_scheduler(scheduler_config(tmp_path / "cfg.yaml", sched))
    create_pod(admin, namespace, pod_json("big", sched, cpu="3"))
    expected = ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                "2 Preemption is not helpful for scheduling.")

    def failed() -> dict[str, Any] | None:
        pod = get_pod(admin, namespace, "big")
        cond = condition(pod or {}, "PodScheduled")
        return cond if cond and cond["status"] == "False" else None

    cond = wait_for("PodScheduled=False", failed)
    assert cond["reason"] == "Unschedulable"
    assert cond["message"] == expected
    ev = wait_for("FailedScheduling event", lambda: next(
        (e for e in events(admin, namespace) if e["reason"] == "FailedScheduling"), None))
    assert ev["note"] == expected and ev["type"] == "Warning" and ev["action"] == "Scheduling"
    assert ev["reportingController"] == sched
    # A node that fits: the NodeAdd watch event moves the pod back to the active queue (its backoff is
    # 1 s, far below the 5 min an unschedulable pod otherwise waits).
    big = nodes.add(unique("big"), cpu="8")
    bound = wait_for("pod bound to the new node", lambda: bound_pods(admin, namespace).get("big"), timeout=20)
    assert bound == big
    assert proc.alive(), proc.log()


def test_preemption_against_the_api_server(admin: KubeApi, namespace: str, nodes: Nodes, run_scheduler: Any,
                                           tmp_path: Path) -> None:
    sched = unique("sched")
    low, high = unique("low"), unique("high")
    for name, value in ((low, 10), (high, 1000)):
        create(admin, "/apis/scheduling.k8s.io/v1/priorityclasses",
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value})
    try:
        guarded, free = nodes.add(unique("guarded"), cpu="1"), nodes.add(unique("free"), cpu="1")
        proc = run_scheduler(scheduler_config(tmp_path / "cfg.yaml", sched))
        # One low-priority pod on each node; the one on `guarded` is protected by a PDB allowing no disruption.
        create_pod(admin, namespace, pod_json("victim-a", sched, cpu="800m", priority_class=low,
                                              labels={"app": "protected"},
                                              extra_spec={"nodeSelector": {"kubernetes.io/hostname": guarded}}))
        create_pod(admin, namespace, pod_json("victim-b", sched, cpu="800m", priority_class=low,
                                              extra_spec={"nodeSelector": {"kubernetes.io/hostname": free}}))
        wait_for("victims bound", lambda: len(bound_pods(admin, namespace)) == 2)
        pdb = create(admin, f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets",
                     {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
                      "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "protected"}}}})
        # No controller manager runs: the status the disruption controller would write (no disruption allowed).
        admin.request_json("PUT", f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/pdb/status", body={
            **pdb, "status": {"currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 0, "expectedPods": 1,
                              "observedGeneration": pdb["metadata"].get("generation", 1)}})
        history = PodHistory(admin, namespace)
        create_pod(admin, namespace, pod_json("preemptor", sched, cpu="800m", priority_class=high))
        wait_for("preemptor bound", lambda: bound_pods(admin, namespace).get("preemptor"), timeout=30)
        history.close()
        assert bound_pods(admin, namespace).get("preemptor") == free
        assert get_pod(admin, namespace, "victim-b") is None  # deleted (KWOK finished the graceful deletion)
        assert get_pod(admin, namespace, "victim-a") is not None  # the PDB was honoured
        evs = events(admin, namespace)
        pre = [e for e in evs if e["reason"] == "Preempted"]
        assert len(pre) == 1 and pre[0]["regarding"]["name"] == "victim-b"
        assert pre[0]["related"]["name"] == "preemptor" and pre[0]["reportingController"] == sched
        # The victim's DisruptionTarget condition came before its deletion; the preemptor was nominated
        # to the node before it was bound there.
        victim_versions = history.of("victim-b")
        conds = [c for v in victim_versions for c in v.status.conditions if c.type == "DisruptionTarget"]
        assert conds, [v.status for v in victim_versions]
        assert (conds[0].status, conds[0].reason) == ("True", "PreemptionByScheduler")
        assert conds[0].message == f"{sched}: preempting to accommodate a higher priority pod"
        assert any(v.metadata.HasField("deletionTimestamp") for v in victim_versions)
        nominated = [v.status.nominatedNodeName for v in history.of("preemptor") if v.status.nominatedNodeName]
        assert nominated and nominated[0] == free
        assert proc.alive(), proc.log()
    finally:
        for name in (low, high):
            admin.request("DELETE", f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")


def test_nodenumber_plugin_places_pods_as_simulate_does_on_a_snapshot(
        admin: KubeApi, namespace: str, nodes: Nodes, run_scheduler: Any, tmp_path: Path, dev_cluster: Any,
        nodenumber_wasm: Path) -> None:
    sched = unique("sched")
    tag = unique("nn")
    for i in range(1, 5):
        nodes.add(f"{tag}-node{i}")
    for i in range(8):
        create_pod(admin, namespace, pod_json(f"pod{i}-{i % 4 + 1}", sched))
    cfg = scheduler_config(tmp_path / "cfg.yaml", sched, extra_profile=(
        "  plugins:\n    multiPoint:\n      enabled:\n      - name: NodeNumber\n        weight: 10\n"
        "  pluginConfig:\n  - name: NodeNumber\n    args:\n"
        f"      guestURL: {nodenumber_wasm}\n      guestConfig: '{{\"reverse\": false}}'\n"))
    # What simulate says on a copy of the cluster, before any scheduler touches it.
    snap = tmp_path / "snap"
    out = subprocess.run([sys.executable, "-m", "wasmsched", "snapshot", "--kubeconfig", str(dev_cluster.kubeconfig),
                          str(snap)], check=False, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "nodes" in out.stdout and "pods" in out.stdout
    sim = subprocess.run([sys.executable, "-m", "wasmsched", "simulate", "--config", str(cfg), "-o", "json",
                          str(snap)], check=False, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert sim.returncode == 0, sim.stderr
    simulated = {p["name"]: p["node"] for p in json.loads(sim.stdout)["pods"] if p["namespace"] == namespace}
    assert len(simulated) == 8 and all(simulated.values()), simulated
    # The same pods, scheduled on the real server.
    run_scheduler(cfg)
    real = wait_bound(admin, namespace, 8, timeout=60)
    assert real == simulated
    # NodeNumber did decide: each pod is on the node whose number is its name's last digit.
    assert all(node.endswith(name[-1]) for name, node in real.items()), real


def test_broken_kubeconfig_exits_2_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 12}}]\ncurrent-context: x\n")
    for path in (bad, tmp_path / "missing"):
        out = subprocess.run([sys.executable, "-m", "wasmsched", "run", "--kubeconfig", str(path)],
                             check=False, capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith(f'error: kubeconfig "{path}": '), out.stderr
        assert "Traceback" not in out.stderr


def test_unreachable_server_is_retried_with_clear_log_lines(tmp_path: Path) -> None:
    port = free_port()
    p = SchedulerProcess(tmp_path, "", None, "--master", f"https://127.0.0.1:{port}", "--leader-elect=false")
    try:
        wait_for("retry log lines", lambda: p.log().count('"Failed to watch"') >= 3, timeout=30)
        assert p.alive()
    finally:
        code = p.stop()
    log = p.log()
    assert code == 0, log
    assert f'server="https://127.0.0.1:{port}"' in log
    assert "Traceback" not in log


def test_forbidden_names_verb_and_resource(dev_cluster: Any, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "restricted.kubeconfig"
    write_kubeconfig(kubeconfig, dev_cluster.server, dev_cluster.ca_file, dev_cluster.restricted_token,
                     user="restricted")
    p = SchedulerProcess(tmp_path, kubeconfig, None, "--leader-elect=false")
    try:
        wait_for("forbidden log line", lambda: 'cannot list resource \\"pods\\"' in p.log()
                 or 'cannot list resource "pods"' in p.log(), timeout=30)
    finally:
        p.stop()
    assert "Traceback" not in p.log()


def test_leader_election_failover_after_kill_9(admin: KubeApi, namespace: str, nodes: Nodes, run_scheduler: Any,
                                               tmp_path: Path) -> None:
    sched, lease_name = unique("sched"), unique("lease")
    for i in range(2):
        nodes.add(unique(f"n{i}"))
    cfg = scheduler_config(tmp_path / "cfg.yaml", sched, lease=lease_name)  # 4s lease, 3s renew, 500ms retry
    a, b = run_scheduler(cfg, name="a"), run_scheduler(cfg, name="b")
    holder = wait_for("a leader", lambda: (lease(admin, lease_name) or {}).get("spec", {}).get("holderIdentity"))
    # The lease is written before its holder logs it: which replica leads is known from the logs.
    leader, follower = wait_for("the leader's log", lambda: next(
        ((p, q) for p, q in ((a, b), (b, a)) if "successfully acquired lease" in p.log().lower()), None))
    names = [f"before{i}" for i in range(4)]
    for n in names:
        create_pod(admin, namespace, pod_json(n, sched))
    wait_bound(admin, namespace, 4)
    # Events are written in the background; a SIGKILL loses those still buffered (as it would kube's), so the
    # kill comes once the first pods' events are out.
    wait_for("the first pods' Scheduled events", lambda: len(
        {e["regarding"]["name"] for e in events(admin, namespace) if e["reason"] == "Scheduled"}) == 4 or None)
    assert "successfully acquired lease" not in follower.log().lower()
    leader.stop(signal.SIGKILL)
    # Pods created while nobody leads are bound by the new leader once it takes over.
    more = [f"after{i}" for i in range(4)]
    for n in more:
        create_pod(admin, namespace, pod_json(n, sched))
    new_holder = wait_for("the follower to take over", lambda: (h := (lease(admin, lease_name) or {}).get(
        "spec", {}).get("holderIdentity")) != holder and h, timeout=20)
    assert new_holder != holder
    spec = lease(admin, lease_name)["spec"]  # type: ignore[index]
    assert spec["leaseTransitions"] >= 1 and spec["leaseDurationSeconds"] == 4
    wait_bound(admin, namespace, 8)
    scheduled_once(admin, namespace, names + more, follower)
    assert follower.alive(), follower.log()
    # SIGTERM: the leader releases the lease (holder cleared) and exits 0.
    assert follower.stop() == 0, follower.log()
    released = lease(admin, lease_name)
    assert released is not None and not released["spec"].get("holderIdentity"), released


def test_watch_cut_and_410_gone_lose_nothing(admin: KubeApi, namespace: str, nodes: Nodes, run_scheduler: Any,
                                             tmp_path: Path, dev_cluster: Any) -> None:
    sched = unique("sched")
    nodes.add(unique("n"))
    proc = run_scheduler(scheduler_config(tmp_path / "cfg.yaml", sched))
    first = [f"a{i}" for i in range(3)]
    for n in first:
        create_pod(admin, namespace, pod_json(n, sched))
    wait_bound(admin, namespace, 3)
    # Writes the informers do not watch (events, a config map) move etcd's revision past what they saw;
    # compacting at the current revision then makes every informer's resourceVersion too old: the
    # restarted API server answers their re-watch with 410 Gone.
    admin.request_json("POST", f"/api/v1/namespaces/{namespace}/configmaps",
                       body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bump"}})
    dev_cluster.compact_etcd()
    dev_cluster.restart_apiserver()
    second = [f"b{i}" for i in range(3)]
    for n in second:
        create_pod(admin, namespace, pod_json(n, sched))
    # A node created after the cut must reach the cache too (a pod only it can hold).
    extra = nodes.add(unique("late"), labels={"late": "yes"})
    create_pod(admin, namespace, pod_json("needs-late", sched, extra_spec={"nodeSelector": {"late": "yes"}}))
    wait_bound(admin, namespace, 7, timeout=60)
    assert bound_pods(admin, namespace)["needs-late"] == extra
    scheduled_once(admin, namespace, first + second + ["needs-late"], proc)
    log = proc.log()
    assert "Watch expired; relisting" in log, log[-3000:]
    assert "Traceback" not in log
    assert proc.alive()


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of one sample of the Prometheus text exposition (labels in any order)."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        head, _, value = line.rpartition(" ")
        got = dict(re.findall(r'(\w+)="([^"]*)"', head))
        if head.split("{")[0] == name and all(got.get(k) == v for k, v in labels.items()):
            return float(value)
    return None


def test_metrics_and_health_on_the_secure_port(admin: KubeApi, namespace: str, nodes: Nodes, run_scheduler: Any,
                                              tmp_path: Path, dev_cluster: Any) -> None:
    sched = unique("sched")
    nodes.add(unique("n"), cpu="2")
    port = free_port()
    certs = tmp_path / "certs"
    proc = run_scheduler(scheduler_config(tmp_path / "cfg.yaml", sched), "--secure-port", str(port),
                         "--cert-dir", str(certs))
    for i in range(3):
        create_pod(admin, namespace, pod_json(f"ok{i}", sched, cpu="100m"))
    create_pod(admin, namespace, pod_json("too-big", sched, cpu="16"))
    wait_bound(admin, namespace, 3)
    base = f"https://127.0.0.1:{port}"
    cafile = wait_for("the serving certificate", lambda: next(iter(certs.glob("*.crt")), None))
    for path in ("/healthz", "/livez", "/readyz"):
        assert https_get(base + path, cafile) == (200, "ok"), path  # no token needed
    status, body = https_get(base + "/metrics", cafile)
    assert status == 401, body
    status, body = https_get(base + "/metrics", cafile, dev_cluster.restricted_token)
    assert (status == 403 and 'cannot get path \\"/metrics\\"' in body) or 'cannot get path "/metrics"' in body, body

    def scraped() -> str | None:
        st, text = https_get(base + "/metrics", cafile, dev_cluster.admin_token)
        assert st == 200, text
        failed = sample(text, "scheduler_schedule_attempts_total", profile=sched, result="unschedulable")
        return text if failed and failed >= 1 else None

    text = wait_for("the unschedulable attempt in /metrics", scraped)
    assert sample(text, "scheduler_schedule_attempts_total", profile=sched, result="scheduled") == 3
    assert sample(text, "scheduler_pending_pods", queue="unschedulable") == 1
    assert sample(text, "scheduler_pending_pods", queue="active") == 0
    assert sample(text, "scheduler_scheduling_attempt_duration_seconds_count", profile=sched,
                  result="scheduled") == 3
    assert sample(text, "scheduler_framework_extension_point_duration_seconds_count", profile=sched,
                  extension_point="Filter", status="Success") is not None
    assert sample(text, "scheduler_pod_scheduling_sli_duration_seconds_count", attempts="1") == 3
    # The process's own metrics, as every Kubernetes component serves them (metrics/runtime.py).
    for name in ("process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds",
                 "wasmsched_malloc_in_use_bytes", "wasmsched_python_allocated_blocks", "wasmsched_threads"):
        assert (sample(text, name) or 0) > 0, name
    assert proc.alive()


def test_a_process_that_loses_its_lease_exits_1(
        admin: KubeApi, namespace: str, nodes: Nodes, run_scheduler: Any, tmp_path: Path) -> None:
    sched, lease_name = unique("sched"), unique("lease")
    nodes.add(unique("n"))
    proc = run_scheduler(scheduler_config(tmp_path / "cfg.yaml", sched, lease=lease_name))  # 4s/3s/500ms
    wait_for("the lease acquired", lambda: "successfully acquired lease" in proc.log().lower() or None)
    create_pod(admin, namespace, pod_json("before", sched))
    wait_bound(admin, namespace, 1)
    # Someone else takes the lease (as a partitioned leader would find it on reconnecting).
    current = lease(admin, lease_name)
    assert current is not None
    current["spec"].update(holderIdentity="intruder", leaseDurationSeconds=3600)
    admin.request_json("PUT", f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{lease_name}",
                       body=current)
    code = wait_for("the process to exit", proc.proc.poll, timeout=30)
    assert code == 1, proc.log()
    assert "Leaderelection lost" in proc.log()
    assert "Traceback" not in proc.log()


def test_isomorphic_events_become_one_event_with_a_series(admin: KubeApi, namespace: str, dev_cluster: Any) -> None:
    from wasmsched.api.types import Pod
    from wasmsched.kube.client_cluster import EventBroadcaster

    pod = Pod()
    pod.metadata.name, pod.metadata.namespace, pod.metadata.uid = "p", namespace, "u-1"
    b = EventBroadcaster(kube_api(dev_cluster.kubeconfig))
    b.start()
    for _ in range(3):
        b.eventf(pod, None, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes are available", "sched")
    b.eventf(pod, None, "Warning", "FailedScheduling", "Scheduling", "another message", "sched")

    def two() -> list[dict[str, Any]] | None:
        evs = events(admin, namespace)
        series = [e for e in evs if e["note"] == "0/1 nodes are available"]
        return evs if len(evs) == 2 and series and (series[0].get("series") or {}).get("count") == 2 else None

    wait_for("one event per note, the repeated one with a series", two)
    b.stop()  # the last count is written at shutdown
    evs = events(admin, namespace)
    repeated = next(e for e in evs if e["note"] == "0/1 nodes are available")
    assert repeated["series"]["count"] == 3
    assert repeated["reportingController"] == "sched" and repeated["reportingInstance"].startswith("sched-")
    b.api.close()


def test_writes_to_a_pod_that_went_away_raise_lookup_errors(admin: KubeApi, namespace: str, nodes: Nodes,
                                                             dev_cluster: Any) -> None:
    """A 404 (pod deleted) or a failed UID precondition (pod recreated under the same name) is a pod that
    went away: PodGoneError, a LookupError, which the failure handler and the preemption executor treat
    as "gone", not as an error to retry."""
    from wasmsched.api.types import Pod
    from wasmsched.kube.client_cluster import EventBroadcaster, KubeCluster, PodGoneError
    from wasmsched.kube.informer import InformerFactory

    node = nodes.add(unique("n"))
    created = create_pod(admin, namespace, pod_json("p", "nobody"))
    stale = Pod()
    stale.metadata.name, stale.metadata.namespace, stale.metadata.uid = "p", namespace, "not-" + created[
        "metadata"]["uid"]
    cluster = KubeCluster(admin, InformerFactory(admin), EventBroadcaster(admin))
    with pytest.raises(PodGoneError):
        cluster.delete_pod(stale, "PreemptionByScheduler")  # UID precondition: the pod is another one now
    assert get_pod(admin, namespace, "p") is not None
    with pytest.raises(PodGoneError):
        cluster.bind(stale, node)  # the binding names another UID: refused, nothing bound
    assert not get_pod(admin, namespace, "p")["spec"].get("nodeName")  # type: ignore[index]
    admin.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/p", body={"gracePeriodSeconds": 0})
    wait_for("the pod gone", lambda: get_pod(admin, namespace, "p") is None or None)
    for write in (lambda: cluster.bind(stale, node), lambda: cluster.set_nominated_node_name(stale, node),
                  lambda: cluster.set_pod_condition(stale, "PodScheduled", "False", "Unschedulable", "x")):
        with pytest.raises(PodGoneError):
            write()


@contextlib.contextmanager
def _deleted_afterwards(admin: KubeApi) -> Iterator[list[str]]:
    """A list the test appends the API paths of cluster-scoped objects it creates to; they are deleted
    when it ends (namespaced ones go with the test's namespace)."""
    paths: list[str] = []
    try:
        yield paths
    finally:
        for path in reversed(paths):
            with contextlib.suppress(ApiError):
                admin.request("DELETE", path)


def _assert_healthy(proc: SchedulerProcess) -> None:
    assert proc.alive(), proc.log()
    assert "Traceback" not in proc.log()


def _bound_pair(admin: KubeApi, namespace: str, claim: str, pv: str, mode: str, source: dict[str, Any],
                cleanup: list[str]) -> None:
    """A PV reserved for a claim (claimRef) and the claim naming it (volumeName), bound to each other by
    dev-cluster's PV controller: returns once the claim is Bound."""
    create(admin, "/api/v1/persistentvolumes", {
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv},
        "spec": {"storageClassName": "", "capacity": {"storage": "1Gi"}, "accessModes": [mode],
                 "claimRef": {"namespace": namespace, "name": claim}, **source}})
    cleanup.append(f"/api/v1/persistentvolumes/{pv}")
    create(admin, f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim},
        "spec": {"storageClassName": "", "volumeName": pv, "accessModes": [mode],
                 "resources": {"requests": {"storage": "1Gi"}}}})
    # The controller's resync (15 s) settles the rare case of seeing the claim before the PV.
    wait_for(f"claim {claim} bound", lambda: _pvc(admin, namespace, claim).get("status", {}).get("phase") == "Bound"
             or None, timeout=40)


def _pvc(admin: KubeApi, namespace: str, name: str) -> dict[str, Any]:
    return admin.request_json("GET", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}")


def _failed_scheduling(admin: KubeApi, namespace: str, name: str) -> str:
    def failed() -> str | None:
        cond = condition(get_pod(admin, namespace, name) or {}, "PodScheduled")
        return cond["message"] if cond and cond["status"] == "False" else None

    return wait_for(f"{name} PodScheduled=False", failed)


def test_volume_binding_with_the_pv_controller(admin: KubeApi, namespace: str, nodes: Nodes,
                                               run_scheduler: Any, tmp_path: Path) -> None:
    """VolumeBinding through `run` with dev-cluster's kube-controller-manager (its PV controller and in-tree
    host-path provisioner): a WaitForFirstConsumer claim is provisioned in the zone its class allows once
    PreBind set the selected-node annotation; a WaitForFirstConsumer claim binds to the one static PV whose
    node affinity the pod's node meets (PreBind writes the PV's claimRef, the controller finishes); a pod
    whose Immediate claim is unbound waits, and is scheduled when the controller binds the claim."""
    sched = unique("sched")
    tag = unique("t").split("-")[1]
    zone = "topology.kubernetes.io/zone"
    names = [nodes.add(unique(f"n{i}"), labels={zone: f"{tag}-{z}"}) for i, z in enumerate("abc")]
    provisioned, local = f"hostpath-wffc-{tag}", f"local-{tag}"
    with _deleted_afterwards(admin) as cleanup:
        create(admin, "/apis/storage.k8s.io/v1/storageclasses", {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": provisioned},
            "provisioner": "kubernetes.io/host-path", "volumeBindingMode": "WaitForFirstConsumer",
            "allowedTopologies": [{"matchLabelExpressions": [{"key": zone, "values": [f"{tag}-b"]}]}]})
        cleanup.append(f"/apis/storage.k8s.io/v1/storageclasses/{provisioned}")
        create(admin, "/apis/storage.k8s.io/v1/storageclasses", {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": local},
            "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"})
        cleanup.append(f"/apis/storage.k8s.io/v1/storageclasses/{local}")
        for i in range(len(names)):
            # The same size on every node: only node affinity tells them apart.
            create(admin, "/api/v1/persistentvolumes", {
                "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"local-{tag}-{i}"},
                "spec": {"storageClassName": local, "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                         "persistentVolumeReclaimPolicy": "Retain", "local": {"path": "/mnt/disk"},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": zone, "operator": "In", "values": [f"{tag}-c" if i == 2 else "elsewhere"]}]}]}}}})
            cleanup.append(f"/api/v1/persistentvolumes/local-{tag}-{i}")

        def claim(name: str, storage_class: str) -> None:
            create(admin, f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", {
                "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
                "spec": {"storageClassName": storage_class, "accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": "1Gi"}}}})

        def with_claim(name: str, claim: str) -> dict[str, Any]:
            return pod_json(name, sched, extra_spec={
                "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]})

        claim("fresh", provisioned)
        claim("static", local)
        claim("immediate", "")
        for pod, pvc in (("provisioned", "fresh"), ("local", "static"), ("waiting", "immediate")):
            create_pod(admin, namespace, with_claim(pod, pvc))
        proc = run_scheduler(scheduler_config(tmp_path / "cfg.yaml", sched))

        bound = wait_for("two pods bound", lambda: b if len(b := bound_pods(admin, namespace)) == 2 else None)
        assert bound == {"provisioned": names[1], "local": names[2]}
        fresh = _pvc(admin, namespace, "fresh")
        assert fresh["status"]["phase"] == "Bound"
        assert fresh["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == names[1]
        pv = admin.request_json("GET", f"/api/v1/persistentvolumes/{fresh['spec']['volumeName']}")
        assert pv["spec"]["hostPath"]["path"].startswith("/tmp/hostpath_pv/")
        assert pv["spec"]["claimRef"]["uid"] == fresh["metadata"]["uid"]
        static = _pvc(admin, namespace, "static")
        assert (static["status"]["phase"], static["spec"]["volumeName"]) == ("Bound", f"local-{tag}-2")

        assert "pod has unbound immediate PersistentVolumeClaims" in _failed_scheduling(admin, namespace, "waiting")
        # An administrator's PV reserved for the claim: the controller binds the two, the claim's update
        # requeues the pod.
        create(admin, "/api/v1/persistentvolumes", {
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"reserved-{tag}"},
            "spec": {"storageClassName": "", "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": "/data"},
                     "claimRef": {"namespace": namespace, "name": "immediate"}}})
        cleanup.append(f"/api/v1/persistentvolumes/reserved-{tag}")
        wait_for("the third pod bound", lambda: len(bound_pods(admin, namespace)) == 3 or None)
        assert _pvc(admin, namespace, "immediate")["spec"]["volumeName"] == f"reserved-{tag}"
        _assert_healthy(proc)


def test_claim_templates_with_the_resourceclaim_controller(admin: KubeApi, namespace: str, nodes: Nodes,
                                                           run_scheduler: Any, tmp_path: Path) -> None:
    """A pod's claim from a ResourceClaimTemplate through `run`: dev-cluster's resourceclaim controller creates
    the claim and records its name in the pod's status; until then DynamicResources' PreEnqueue holds the pod;
    then the scheduler allocates the node's device to it."""
    sched = unique("sched")
    tag = unique("t").split("-")[1]
    gpu = f"gpu-{tag}.example.com"
    names = [nodes.add(unique(f"n{i}")) for i in range(2)]
    with _deleted_afterwards(admin) as cleanup:
        create(admin, "/apis/resource.k8s.io/v1/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": gpu},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{gpu}"'}}]}})
        cleanup.append(f"/apis/resource.k8s.io/v1/deviceclasses/{gpu}")
        create(admin, "/apis/resource.k8s.io/v1/resourceslices", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{names[1]}-gpu"},
            "spec": {"driver": gpu, "nodeName": names[1],
                     "pool": {"name": names[1], "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}]}})
        cleanup.append(f"/apis/resource.k8s.io/v1/resourceslices/{names[1]}-gpu")
        create(admin, f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaimtemplates", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": gpu}}]}}}})
        proc = run_scheduler(scheduler_config(tmp_path / "cfg.yaml", sched))
        create_pod(admin, namespace, pod_json("trainer", sched, extra_spec={
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}))

        assert wait_bound(admin, namespace, 1) == {"trainer": names[1]}
        [status] = get_pod(admin, namespace, "trainer")["status"]["resourceClaimStatuses"]  # type: ignore[index]
        claim = admin.request_json(
            "GET", f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{status['resourceClaimName']}")
        assert claim["metadata"]["ownerReferences"][0]["name"] == "trainer"
        [result] = claim["status"]["allocation"]["devices"]["results"]
        assert (result["driver"], result["pool"], result["device"]) == (gpu, names[1], "gpu-0")
        assert [r["name"] for r in claim["status"]["reservedFor"]] == ["trainer"]
        _assert_healthy(proc)


def test_volumes_and_devices_against_the_api_server(admin: KubeApi, namespace: str, nodes: Nodes,
                                                    run_scheduler: Any, tmp_path: Path) -> None:
    """kube 1.37's whole default profile through `run`: a CSI attach limit (CSINode), a ReadWriteOncePod
    claim in use, and devices (resource.k8s.io/v1) published on two of three nodes; the scheduler writes
    the claims' allocation and reservation through the API server (volume binding and provisioning:
    test_volume_binding_with_the_pv_controller)."""
    sched = unique("sched")
    tag = unique("t").split("-")[1]
    names = [nodes.add(unique(f"n{i}")) for i in range(3)]
    attach, gpu = f"attach-{tag}.csi.example.com", f"gpu-{tag}.example.com"
    with _deleted_afterwards(admin) as cleanup:
        for i, n in enumerate(names):
            create(admin, "/apis/storage.k8s.io/v1/csinodes", {
                "apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": n},
                "spec": {"drivers": [{"name": attach, "nodeID": n, "allocatable": {"count": 1 if i == 0 else 0}}]}})
            cleanup.append(f"/apis/storage.k8s.io/v1/csinodes/{n}")
        _bound_pair(admin, namespace, "used", f"pv-used-{tag}", "ReadWriteOnce",
                    {"csi": {"driver": attach, "volumeHandle": f"used-{tag}"}}, cleanup)
        _bound_pair(admin, namespace, "more", f"pv-more-{tag}", "ReadWriteOnce",
                    {"csi": {"driver": attach, "volumeHandle": f"more-{tag}"}}, cleanup)
        _bound_pair(admin, namespace, "exclusive", f"pv-excl-{tag}", "ReadWriteOncePod",
                    {"hostPath": {"path": "/data"}}, cleanup)
        create(admin, "/apis/resource.k8s.io/v1/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": gpu},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{gpu}"'}}]}})
        cleanup.append(f"/apis/resource.k8s.io/v1/deviceclasses/{gpu}")
        for n in names[:2]:
            create(admin, "/apis/resource.k8s.io/v1/resourceslices", {
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpu"},
                "spec": {"driver": gpu, "nodeName": n, "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": "gpu-0"}]}})
            cleanup.append(f"/apis/resource.k8s.io/v1/resourceslices/{n}-gpu")
        for i in range(1, 4):
            create(admin, f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims", {
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": f"gpu-{i}"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": gpu}}]}}})

        def with_claim(name: str, claim: str, node: str = "") -> dict[str, Any]:
            spec: dict[str, Any] = {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}
            if node:
                spec["nodeName"] = node
            return pod_json(name, sched, extra_spec=spec)

        create_pod(admin, namespace, with_claim("user", "used", names[0]))
        create_pod(admin, namespace, with_claim("owner", "exclusive", names[2]))
        create_pod(admin, namespace, with_claim("attacher", "more"))
        create_pod(admin, namespace, with_claim("second", "exclusive"))
        for i in range(1, 4):
            create_pod(admin, namespace, pod_json(f"trainer-{i}", sched, extra_spec={
                "resourceClaims": [{"name": "gpu", "resourceClaimName": f"gpu-{i}"}]}))
        proc = run_scheduler(scheduler_config(tmp_path / "cfg.yaml", sched))

        no_victims = "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        assert _failed_scheduling(admin, namespace, "attacher") == (
            f"0/3 nodes are available: 3 node(s) exceed max volume count. {no_victims}")
        assert _failed_scheduling(admin, namespace, "second") == (
            "0/3 nodes are available: 3 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
            f"access mode already in-use by another pod. {no_victims}")
        bound = wait_for("two trainers bound", lambda: (
            b if len(b := {k: v for k, v in bound_pods(admin, namespace).items() if k.startswith("trainer")}) == 2
            else None))
        assert sorted(bound.values()) == sorted(names[:2])
        assert _failed_scheduling(admin, namespace, "trainer-3") == (
            "0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are available: "
            "3 Preemption is not helpful for scheduling.")
        for pod, node in bound.items():
            claim = admin.request_json(
                "GET", f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/gpu-{pod[-1]}")
            [result] = claim["status"]["allocation"]["devices"]["results"]
            assert (result["driver"], result["pool"], result["device"]) == (gpu, node, "gpu-0")
            assert [r["name"] for r in claim["status"]["reservedFor"]] == [pod]
        _assert_healthy(proc)


RELOAD_WAT = """(module
  (import "k8s.io/scheduler" "currentNodeName" (func $node (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "score") (result i64)
    (local $n i32)
    (local.set $n (call $node (i32.const 0) (i32.const 256)))
    (if (result i64) (i32.eq (i32.load8_u (i32.sub (local.get $n) (i32.const 1))) (i32.const WANT))
      (then (i64.const 0x64_0000_0000)) (else (i64.const 0)))))"""


def _prefers(digit: str) -> bytes:
    """A Score guest: 100 for the node whose name ends in `digit`, 0 for the others."""
    import wasmtime

    return bytes(wasmtime.wat2wasm(RELOAD_WAT.replace("WANT", str(ord(digit)))))


def test_run_reloads_a_changed_guest_and_keeps_it_when_a_reload_fails(
        admin: KubeApi, namespace: str, nodes: Nodes, run_scheduler: Any, tmp_path: Path) -> None:
    """docs/abi.md §16.2 as a user sees it: the file behind guestURL is replaced while `run` runs; the next pods
    get the new module; a broken module is refused with one log line and a Warning event on the Lease."""
    sched, plugin = unique("sched"), unique("Prefers")
    prefix = unique("n")
    for i in (1, 2):
        nodes.add(f"{prefix}-{i}")
    guest = tmp_path / "guest.wasm"
    guest.write_bytes(_prefers("1"))
    cfg = scheduler_config(tmp_path / "cfg.yaml", sched, extra_profile=(
        f"  plugins:\n    multiPoint:\n      enabled:\n      - name: {plugin}\n        weight: 50\n"
        f"  pluginConfig:\n  - name: {plugin}\n    args:\n      guestURL: {guest}\n      reloadInterval: 100ms\n"))
    proc = run_scheduler(cfg)

    def place(pod: str, n: int) -> str:
        create_pod(admin, namespace, pod_json(pod, sched))
        return wait_bound(admin, namespace, n, timeout=60)[pod]

    assert place("before", 1) == f"{prefix}-1"
    tmp = tmp_path / "guest.tmp"
    tmp.write_bytes(_prefers("2"))
    tmp.replace(guest)
    wait_for("the reload", lambda: '"Reloaded wasm plugin"' in proc.log(), 30)
    assert place("after", 2) == f"{prefix}-2"

    tmp.write_bytes(b"\0asm\x01\0\0\0garbage")
    tmp.replace(guest)
    wait_for("the failed reload", lambda: '"Reload of wasm plugin failed' in proc.log(), 30)
    failed = [line for line in proc.log().splitlines() if "Reload of wasm plugin failed" in line]
    assert len(failed) == 1 and f'plugin="{plugin}"' in failed[0], failed
    # `or None`: an empty list is an answer to wait_for, and the event is written asynchronously.
    ev = wait_for("the Warning event", lambda: [e for e in events(admin, "kube-system")
                                                if e["reason"] == "WasmPluginReloadFailed"
                                                and plugin in e.get("note", "")] or None, 30)
    assert ev[0]["type"] == "Warning"
    assert ev[0]["regarding"]["kind"] == "Lease" and ev[0]["regarding"]["name"] == "kube-scheduler"
    assert place("kept", 3) == f"{prefix}-2"  # the running module was kept
    assert proc.alive()
