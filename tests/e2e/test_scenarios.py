"""End-to-end `wasmsched simulate` scenarios with kube-scheduler's expected placements and messages.

Every scenario under scenarios/<name>/ (cluster.yaml, optional scheduler.yaml) is chosen so that
kube-scheduler's result is deterministic: each pod has a single feasible node, or the scores differ
strictly. Reasons and codes are kube-scheduler 1.37's (pkg/scheduler/framework/plugins/...).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from .helpers import (
    NO_VICTIMS,
    NOT_HELPFUL,
    Outcome,
    Preempted,
    Preemptor,
    Running,
    Unsched,
    assert_outcome,
    fit_message,
    pods_by_name,
    simulate_json,
)

UNTOLERATED = "node(s) had untolerated taint(s)"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
ENFORCED_AFFINITY = "node(s) didn't match scheduler-enforced node affinity"
PORTS = "node(s) didn't have free ports for the requested pod ports"
CORDONED = "node(s) were unschedulable"
SPREAD = "node(s) didn't match pod topology spread constraints"
AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

EXPECTED: Mapping[str, Mapping[str, Outcome]] = {
    # NodeResourcesFit: cpu and memory; a request above every node's allocatable is
    # UnschedulableAndUnresolvable, so preemption is "not helpful" on every node.
    "resources-fit": {
        "wants-cpu": "n-cpu",
        "wants-memory": "n-mem",
        "wants-both": Unsched(fit_message(3, {"Insufficient cpu": 3, "Insufficient memory": 3},
                                          {NOT_HELPFUL: 3})),
    },
    # "Too many pods" is resolvable (Unschedulable): preemption looks at n1 but finds no
    # lower-priority pod there.
    "pods-count": {
        "any-node": "n2",
        "pinned-to-n1": Unsched(fit_message(2, {"Too many pods": 1, NODE_AFFINITY: 1},
                                            {NO_VICTIMS: 1, NOT_HELPFUL: 1})),
        "running": Running("n1"),
    },
    "extended-resources": {
        "one-gpu": "gpu-node",
        "four-gpus": Unsched(fit_message(2, {"Insufficient nvidia.com/gpu": 2}, {NOT_HELPFUL: 2})),
    },
    # Pod requests: max(init containers, sum of containers); sidecars add to the containers.
    "init-and-sidecar": {
        "big-init": "big",
        "with-sidecar": "big",
        "huge-init": Unsched(fit_message(2, {"Insufficient cpu": 2}, {NOT_HELPFUL: 2})),
    },
    # Default scoring strategy LeastAllocated spreads...
    "least-allocated": {"incoming": "idle", "running": Running("busy")},
    # ...MostAllocated (scheduler.yaml) packs...
    "most-allocated": {"incoming": "busy", "running": Running("busy")},
    # ...and so does RequestedToCapacityRatio with an increasing shape.
    "requested-to-capacity": {"incoming": "busy", "running": Running("busy")},
    "taints-noschedule": {
        "tolerates-gpu": "gpu",
        "tolerates-any-dedicated": "infra",
        "no-tolerations": Unsched(fit_message(2, {UNTOLERATED: 2}, {NOT_HELPFUL: 2})),
    },
    # TaintToleration scores intolerable PreferNoSchedule taints (reversed, weight 3).
    "taints-prefer-noschedule": {"plain": "clean"},
    "node-selector": {
        "wants-ssd": "n2",
        "wants-nvme": Unsched(fit_message(3, {NODE_AFFINITY: 3}, {NOT_HELPFUL: 3})),
    },
    "node-affinity-required": {
        "in-zone-b": "b",
        "gen-greater-than-4": "b",
        "no-gen-label": "c",
        "by-field-name": "a",
        "zone-d": Unsched(fit_message(3, {NODE_AFFINITY: 3}, {NOT_HELPFUL: 3})),
    },
    "node-affinity-preferred": {"prefers-zone-b": "b"},
    # NodeAffinityArgs.addedAffinity: checked before the pod's own selector, with its own reason.
    "added-affinity": {
        "anywhere": "batch-1",
        "wants-web": Unsched(fit_message(2, {NODE_AFFINITY: 1, ENFORCED_AFFINITY: 1}, {NOT_HELPFUL: 2})),
    },
    "unschedulable-node": {
        "needs-two-cpus": Unsched(fit_message(2, {"Insufficient cpu": 1, CORDONED: 1}, {NOT_HELPFUL: 2})),
        "tolerates-cordon": "cordoned",
    },
    # Pods with spec.nodeName are running pods: reported Running, and they use their node.
    "running-pods-nodename": {"pending": "n2", "bound-1": Running("n1"), "bound-2": Running("n2")},
    "spread-hard": {
        "web-new": "node-c",
        "web-1": Running("node-a"), "web-2": Running("node-a"), "web-3": Running("node-b"),
    },
    # zone-c still counts for the global minimum (0) although its node is too small.
    "spread-hard-violated": {
        "web-new": Unsched(fit_message(3, {"Insufficient cpu": 1, SPREAD: 2}, {NOT_HELPFUL: 1, NO_VICTIMS: 2})),
        "web-1": Running("node-a"), "web-2": Running("node-a"), "web-3": Running("node-b"),
    },
    "spread-soft": {"web-new": "node-b", "web-1": Running("node-a"), "web-2": Running("node-a")},
    # System default constraints with DefaultSelector: web-5's ReplicaSet and api-2's Service spread them
    # to zone-b, where resources alone would pick a2; lone has neither, so no default constraints.
    "spread-system-defaults": {
        "web-5": "b1", "lone": "a2", "api-2": "b1",
        **{f"web-{i}": Running("a1") for i in range(1, 5)}, "api-1": Running("a2"),
    },
    # minDomains 3 > 2 eligible domains: the global minimum is 0, so both zones exceed maxSkew.
    "spread-min-domains": {
        "web-three-domains": Unsched(fit_message(2, {SPREAD: 2}, {NO_VICTIMS: 2})),
        "api-two-domains": "node-b",
        "web-1": Running("node-a"), "web-2": Running("node-b"),
    },
    "pod-affinity-required": {"near-db": "n2", "db-0": Running("n2")},
    "pod-anti-affinity-required": {
        "away-from-db": "n1",
        "away-from-db-on-n2": Unsched(fit_message(2, {NODE_AFFINITY: 1, ANTI_AFFINITY: 1},
                                                  {NO_VICTIMS: 1, NOT_HELPFUL: 1})),
        "db-0": Running("n2"),
    },
    "pod-affinity-unsatisfiable": {
        "near-cache": Unsched(fit_message(2, {AFFINITY: 2}, {NOT_HELPFUL: 2})),
        "self-affine": "n1",
        "db-0": Running("n2"),
    },
    "existing-anti-affinity": {
        "web": "n2",
        "web-on-n1": Unsched(fit_message(2, {NODE_AFFINITY: 1, EXISTING_ANTI_AFFINITY: 1},
                                         {NO_VICTIMS: 1, NOT_HELPFUL: 1})),
        "guard": Running("n1"),
    },
    "pod-affinity-preferred": {"prefers-db": "n2", "avoids-db": "n1", "db-0": Running("n2")},
    # DefaultPreemption: the victim is deleted, the preemptor is nominated and bound next attempt.
    "preemption": {"critical": Preemptor("n1"), "batch-job": Preempted("n1")},
    # Fewest PodDisruptionBudget violations first: n2's victim is not protected.
    "preemption-pdb-node": {"critical": Preemptor("n2"), "unprotected": Preempted("n2"), "protected": Running("n1")},
    # On one node, PDB-violating victims are reprieved first: the unprotected pod goes.
    "preemption-pdb-victim": {"critical": Preemptor("n1"), "unprotected": Preempted("n1"), "protected": Running("n1")},
    # A pod without priorityClassName gets the globalDefault class's value (500 > 100).
    "priority-global-default": {"defaulted": Preemptor("n1"), "low-runner": Preempted("n1")},
    # PrioritySort: the higher-priority pod is scheduled first although it is listed second.
    "queue-priority-order": {
        "high-second": "n1",
        "low-first": Unsched(fit_message(1, {"Insufficient cpu": 1}, {NO_VICTIMS: 1})),
    },
    # Two profiles: spread-me uses default-scheduler (LeastAllocated), pack-me bin-packer (MostAllocated).
    "two-profiles": {"spread-me": "idle", "pack-me": "busy", "running": Running("busy")},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scenario(capsys: pytest.CaptureFixture[str], name: str) -> None:
    doc = simulate_json(capsys, name)
    assert_outcome(doc, EXPECTED[name])


def test_host_ports(capsys: pytest.CaptureFixture[str]) -> None:
    """Two identical pods want host port 8080/TCP, taken on n1: one gets n2, the other nothing.

    Which of the two equal-priority pods goes first is not fixed, so only the pair is checked.
    A UDP pod on the same port number does not conflict.
    """
    doc = simulate_json(capsys, "host-ports")
    pods = pods_by_name(doc)
    placed = [n for n in ("web-a", "web-b") if pods[n]["phase"] == "Scheduled"]
    assert len(placed) == 1, pods
    winner = placed[0]
    loser = "web-b" if winner == "web-a" else "web-a"
    assert_outcome(doc, {
        winner: "n2",
        loser: Unsched(fit_message(2, {PORTS: 2}, {NO_VICTIMS: 2})),
        "udp-8080": "n1",
        "running-web": Running("n1"),
    })


def test_scheduling_gates(capsys: pytest.CaptureFixture[str]) -> None:
    """SchedulingGates PreEnqueue: the gated pod never enters activeQ and gets no event."""
    doc = simulate_json(capsys, "scheduling-gates")
    pods = pods_by_name(doc)
    gated = pods["gated"]
    assert gated["phase"] == "Unschedulable"
    assert gated["node"] is None
    assert gated["attempts"] == 0
    # scheduling_gates.go: fmt.Sprintf("waiting for scheduling gates: %v", gates) with gates a []string
    assert gated["message"] == "waiting for scheduling gates: [example.com/quota example.com/approval]"
    assert not [e for e in doc["events"] if e["regarding"] == "default/gated"]
    assert pods["ungated"]["node"] == "n1"
    assert doc["summary"]["unschedulable"] == 1
    assert doc["summary"]["scheduled"] == 1


def test_unknown_scheduler_name(capsys: pytest.CaptureFixture[str]) -> None:
    """A pod for a scheduler no profile serves is left alone: phase Ignored, no events, no attempts."""
    doc = simulate_json(capsys, "unknown-scheduler-name")
    pods = pods_by_name(doc)
    other = pods["for-someone-else"]
    assert other["phase"] == "Ignored"
    assert other["node"] is None
    assert other["attempts"] == 0
    assert not [e for e in doc["events"] if e["regarding"] == "default/for-someone-else"]
    assert pods["for-us"]["phase"] == "Scheduled"
    assert pods["for-us"]["node"] == "n1"
    assert doc["summary"]["scheduled"] == 1
    assert doc["summary"]["unschedulable"] == 0


def test_preemption_event_names_the_preemptor(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The Preempted event carries the preemptor's UID, as kube-scheduler's does."""
    out_dir = tmp_path / "state"
    doc = simulate_json(capsys, "preemption", "--out", str(out_dir))
    pods = list(yaml.safe_load_all((out_dir / "pods.yaml").read_text()))
    critical = [p for p in pods if p["metadata"]["name"] == "critical"]
    assert len(critical) == 1
    uid = critical[0]["metadata"]["uid"]
    assert uid
    preempted = [e for e in doc["events"] if e["reason"] == "Preempted"]
    assert preempted == [{"type": "Normal", "reason": "Preempted", "regarding": "default/batch-job",
                          "message": f"Preempted by pod {uid} on node n1"}]
    # The victim is gone from the final state; the preemptor is bound.
    assert [p["metadata"]["name"] for p in pods] == ["critical"]
    assert critical[0]["spec"]["nodeName"] == "n1"


def test_storage_and_devices(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """kube 1.37's whole default profile on volumes and devices, with `--provision-volumes`:

    - a WaitForFirstConsumer claim whose class provisions only in zone b: the pod lands on n-b and the
      claim ends bound to a PV provisioned there (with zone b node affinity);
    - a CSI volume no node has an attachment slot left for (NodeVolumeLimits);
    - a ReadWriteOncePod claim already in use (VolumeRestrictions);
    - three pods wanting one device each from a template, which only n-a and n-b publish
      (DynamicResources): two get a node and an allocated claim, the third "cannot allocate all claims".
    """
    out = tmp_path / "out"
    doc = simulate_json(capsys, "storage-and-devices", "--provision-volumes", "--out", str(out))
    volume_limit = "node(s) exceed max volume count"
    rwop = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use "
            "by another pod")
    pods = pods_by_name(doc)
    # n-a and n-b tie for the device pods: which gets which is the seeded tie-break's.
    assert {pods["trainer-1"]["node"], pods["trainer-2"]["node"]} == {"n-a", "n-b"}
    assert_outcome(doc, {
        "trainer-1": pods["trainer-1"]["node"],
        "trainer-2": pods["trainer-2"]["node"],
        "db": "n-b",
        "attacher": Unsched(fit_message(3, {volume_limit: 3}, {NO_VICTIMS: 3})),
        "second": Unsched(fit_message(3, {rwop: 3}, {NO_VICTIMS: 3})),
        "trainer-3": Unsched(fit_message(3, {"cannot allocate all claims": 3}, {NOT_HELPFUL: 3})),
        "user": Running("n-a"),
        "owner": Running("n-c"),
    })

    claims = {c["metadata"]["name"]: c for c in yaml.safe_load_all((out / "persistentvolumeclaims.yaml").read_text())}
    data = claims["data"]
    assert data["status"]["phase"] == "Bound"
    assert data["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n-b"
    pvs = {v["metadata"]["name"]: v for v in yaml.safe_load_all((out / "persistentvolumes.yaml").read_text())}
    pv = pvs[data["spec"]["volumeName"]]
    assert pv["spec"]["claimRef"]["name"] == "data" and pv["status"]["phase"] == "Bound"
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]

    rcs = list(yaml.safe_load_all((out / "resourceclaims.yaml").read_text()))
    by_pod = {c["metadata"]["ownerReferences"][0]["name"]: c for c in rcs}
    assert set(by_pod) == {"trainer-1", "trainer-2", "trainer-3"}
    for name in ("trainer-1", "trainer-2"):
        status = by_pod[name]["status"]
        [result] = status["allocation"]["devices"]["results"]
        assert (result["driver"], result["pool"], result["device"]) == (
            "gpu.example.com", pods[name]["node"], "gpu-0")
        assert [r["name"] for r in status["reservedFor"]] == [name]
    assert "allocation" not in by_pod["trainer-3"].get("status", {})


def test_unprovisioned_claim_fails_binding_without_waiting(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --provision-volumes nobody provisions the WaitForFirstConsumer claim: VolumeBinding's PreBind
    fails as kube's does after bindTimeoutSeconds (600 s), at once, since the embedded cluster's controllers
    act within each write; the pod is retried and reported, the claim keeps its selected node."""
    doc = simulate_json(capsys, "storage-and-devices")
    db = pods_by_name(doc)["db"]
    assert db["phase"] == "Error"
    assert db["message"] == 'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'
