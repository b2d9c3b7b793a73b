"""Every in-tree batch form against its plugin's per-node form (the reference semantics), on random clusters
of many node shapes: filter_batch against filter node by node, score_batch against score node by node, and
normalize_score_batch against normalize_score. Each batch form is asked with the nodes' rows in the node
table (its columnar answer, where it has one) and without them (its per-node loop), on the whole walk
order or a random subset of the nodes, as the scheduler asks them."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from wasmsched.api.types import (
    CSIDriver,
    CSINode,
    DeviceClass,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    ResourceClaim,
    ResourceSlice,
    StorageClass,
    VolumeAttachment,
)
from wasmsched.config.args import (
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
    default_volume_binding_shape,
)
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interface import FilterPlugin, Plugin, ScorePlugin
from wasmsched.framework.nodetable import NodeColumns
from wasmsched.framework.snapshot import Snapshot, new_snapshot
from wasmsched.framework.status import is_skip
from wasmsched.framework.types import NodeInfo
from wasmsched.plugins import interpodaffinity, podtopologyspread
from wasmsched.plugins.dynamicresources import DynamicResources
from wasmsched.plugins.imagelocality import ImageLocality
from wasmsched.plugins.nodeaffinity import NodeAffinity
from wasmsched.plugins.nodedeclaredfeatures import NodeDeclaredFeatures
from wasmsched.plugins.nodedeclaredfeatures.framework import Framework
from wasmsched.plugins.nodedeclaredfeatures.version import parse_semantic
from wasmsched.plugins.nodename import NodeName
from wasmsched.plugins.nodeports import NodePorts
from wasmsched.plugins.noderesources import BalancedAllocation, Fit
from wasmsched.plugins.nodeunschedulable import NodeUnschedulable
from wasmsched.plugins.nodevolumelimits import CSILimits
from wasmsched.plugins.tainttoleration import TaintToleration, taint_toleration
from wasmsched.plugins.volumebinding import VolumeBinding
from wasmsched.testing.builders import PodWrapper, make_pod
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

from ..framework.test_nodetable import AFFINITY_ARGS, FIT_ARGS, random_node, random_pod, random_rows
from .test_nodedeclaredfeatures import MockFeature
from .util import filter_agrees, score_agrees
from .volumebinding_util import HOSTNAME, bind_pv_to, make_pv, make_pvc, make_sc

RTC_ARGS = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(
    REQUESTED_TO_CAPACITY_RATIO, [ResourceSpec("cpu", 1), ResourceSpec("memory", 2)],
    RequestedToCapacityRatioParam([UtilizationShapePoint(0, 0), UtilizationShapePoint(60, 8),
                                   UtilizationShapePoint(100, 10)])))
TOPOLOGY_KEYS = ["zone", "type", "kubernetes.io/hostname"]


def _with_pod_terms(rng: random.Random, pod: Pod) -> Pod:
    """Labels, host ports, pod (anti-)affinity and topology spread, at random: what NodePorts,
    InterPodAffinity and PodTopologySpread read."""
    pod.metadata.labels["app"] = rng.choice(["a", "b", "c"])
    if rng.random() < 0.3:
        c = pod.spec.containers[0]
        port = c.ports.add()
        port.containerPort = port.hostPort = rng.choice([80, 443, 8080])
        port.protocol = rng.choice(["TCP", "UDP"])
    w = object.__new__(PodWrapper)  # the wrapper's methods on a pod already made
    w.pod = pod
    app = {"app": rng.choice(["a", "b", "c"])}
    for add in (w.pod_affinity, w.pod_anti_affinity):
        if rng.random() < 0.15:
            add(rng.choice(TOPOLOGY_KEYS), app)
    for add_preferred in (w.preferred_pod_affinity, w.preferred_pod_anti_affinity):
        if rng.random() < 0.2:
            add_preferred(rng.randint(1, 100), rng.choice(TOPOLOGY_KEYS), app)
    if rng.random() < 0.3:
        w.spread_constraint(rng.randint(1, 3), rng.choice(TOPOLOGY_KEYS),
                            rng.choice(["DoNotSchedule", "ScheduleAnyway"]), app)
    return pod


def _cluster(seed: int) -> tuple[Snapshot, random.Random, int]:
    rng = random.Random(seed)
    n = rng.randint(1, 80)
    nodes = [random_node(rng, i) for i in range(n)]
    running = [_with_pod_terms(rng, random_pod(rng, f"run-{j}", rng.choice(nodes).metadata.name))
               for j in range(n * 2)]
    return new_snapshot(running, nodes), rng, n


def _scored(pl: Any, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> bool:
    """PreScore ran and did not skip the plugin."""
    st = pl.pre_score(state, pod, nodes)
    return not is_skip(st) and st is None


def _prefiltered(pl: Any, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> bool:
    """PreFilter ran and left Filter something to decide."""
    _, st = pl.pre_filter(state, pod, nodes)
    return st is None


CASES: list[tuple[str, Callable[[random.Random, FakeHandle], Plugin]]] = [
    ("Fit", lambda rng, h: Fit(rng.choice([*FIT_ARGS, RTC_ARGS]), h)),
    ("BalancedAllocation", lambda rng, h: BalancedAllocation(NodeResourcesBalancedAllocationArgs(), h)),
    ("TaintToleration", lambda rng, h: TaintToleration(h)),
    ("NodeUnschedulable", lambda rng, h: NodeUnschedulable()),
    ("NodeName", lambda rng, h: NodeName()),
    ("ImageLocality", lambda rng, h: ImageLocality(h)),
    ("NodeAffinity", lambda rng, h: NodeAffinity(rng.choice(AFFINITY_ARGS), h)),
    ("NodePorts", lambda rng, h: NodePorts()),
    ("InterPodAffinity", lambda rng, h: interpodaffinity.new(None, h)),
    ("PodTopologySpread", lambda rng, h: podtopologyspread.new(None, h)),
]


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize(("name", "make"), CASES, ids=[c[0] for c in CASES])
def test_batch_forms_equal_per_node_forms(name: str, make: Callable[[random.Random, FakeHandle], Plugin],
                                         seed: int) -> None:
    snap, rng, n = _cluster(seed)
    handle = FakeHandle(snapshot=snap)
    nodes = snap.list()
    asked = 0
    for k in range(60):
        if asked >= 12:
            break
        pod = _with_pod_terms(rng, random_pod(rng, f"incoming-{k}"))
        if rng.random() < 0.1:
            pod.spec.nodeName = f"node-{rng.randrange(n):04d}"
        rows = random_rows(rng, n)
        infos = [nodes[r] for r in rows.tolist()]
        columns = NodeColumns(snap.node_table(), rows)
        pl = make(rng, handle)
        state = CycleState()
        if isinstance(pl, FilterPlugin) and (not hasattr(pl, "pre_filter") or _prefiltered(pl, state, pod, nodes)):
            filter_agrees(pl, state, pod, infos, columns)
            asked += 1
        if isinstance(pl, ScorePlugin) and (not hasattr(pl, "pre_score") or _scored(pl, state, pod, infos)):
            score_agrees(pl, state, pod, infos, columns)
            asked += 1
    assert asked, f"{name} was never asked"



@pytest.mark.parametrize("seed", range(10))
def test_taint_toleration_batch_forms_over_many_taint_lists(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """TaintToleration's columnar forms ask only the rows' own taint lists once the table has many (here: any)."""
    monkeypatch.setattr(taint_toleration, "_FEW_TAINT_LISTS", 0)
    name, make = next(c for c in CASES if c[0] == "TaintToleration")
    test_batch_forms_equal_per_node_forms(name, make, seed)

# --- plugins whose batch forms need objects beyond nodes and pods --------------------------------------------
# NodeVolumeLimits (filter_batch: one VolumeAttachment index per batch), NodeDeclaredFeatures (filter_batch:
# PreFilter's state read once), VolumeBinding and DynamicResources (score_batch: helper/columns'
# ZeroScoresFastPath), each on random clusters of many node shapes, asked as the scheduler asks them (PreFilter,
# then Filter; PreScore, then Score over the nodes that passed), with the node table's rows and without.

def _ask(pl: Plugin, snap: Snapshot, rng: random.Random, pod: Pod) -> int:
    """Filter and Score of `pod`, batch forms against per-node forms, over a random walk of the snapshot's
    nodes; how many forms were compared."""
    nodes = snap.list()
    rows = random_rows(rng, len(nodes))
    infos = [nodes[r] for r in rows.tolist()]
    columns = NodeColumns(snap.node_table(), rows)
    state = CycleState()
    asked = 0
    if isinstance(pl, FilterPlugin):
        if hasattr(pl, "pre_filter"):
            _, st = pl.pre_filter(state, pod, nodes)
            if is_skip(st):
                state.skip_filter_plugins = {pl.name}
            elif st is not None:
                return 0
        if pl.name not in state.skip_filter_plugins:
            filter_agrees(pl, state, pod, infos, columns)
            asked += 1
            rows = rows[[pl.filter(state, pod, ni) is None for ni in infos]]
            infos = [nodes[r] for r in rows.tolist()]
            columns = NodeColumns(snap.node_table(), rows)
    if isinstance(pl, ScorePlugin) and infos and (not hasattr(pl, "pre_score") or _scored(pl, state, pod, infos)):
        score_agrees(pl, state, pod, infos, columns)
        asked += 1
    return asked


CSI_DRIVERS = ["ebs.csi.aws.com", "pd.csi.storage.gke.io", "example.com/csi"]


def _csi_cluster(seed: int) -> tuple[Snapshot, random.Random, list[Any], Callable[[str], Pod]]:
    """Nodes with or without a CSINode (each driver with a limit of 0 to 4 volumes, or none; EBS migration
    announced or not), CSI PVs and the claims bound to them, claims of a class waiting for a volume, claims
    that are missing, VolumeAttachments, and pods using them on the nodes."""
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    nodes = [random_node(rng, i) for i in range(n)]
    objects: list[Any] = []
    volumes = {d: [f"pv-{d.split('.')[0]}-{j}" for j in range(6)] for d in CSI_DRIVERS}
    for d, names in volumes.items():
        for name in names:
            pv = PersistentVolume()
            pv.metadata.name = name
            pv.spec.persistentVolumeSource.csi.driver = d
            pv.spec.persistentVolumeSource.csi.volumeHandle = name
            claim = PersistentVolumeClaim()
            claim.metadata.name, claim.metadata.namespace = name.replace("pv-", "claim-"), "default"
            claim.spec.volumeName = name
            objects += [pv, claim]
        sc = StorageClass(provisioner=d)
        sc.metadata.name = f"sc-{d.split('.')[0]}"
        waiting = PersistentVolumeClaim()
        waiting.metadata.name, waiting.metadata.namespace = f"claim-{d.split('.')[0]}-waiting", "default"
        waiting.spec.storageClassName = sc.metadata.name
        objects += [sc, waiting]
    driver = CSIDriver()
    driver.metadata.name = CSI_DRIVERS[2]
    driver.spec.preventPodSchedulingIfMissing = True
    objects.append(driver)
    for node in nodes:
        name = node.metadata.name
        if rng.random() < 0.8:
            csi_node = CSINode()
            csi_node.metadata.name = name
            if rng.random() < 0.3:
                csi_node.metadata.annotations["storage.alpha.kubernetes.io/migrated-plugins"] = "kubernetes.io/aws-ebs"
            for d in rng.sample(CSI_DRIVERS, rng.randint(0, 3)):
                entry = csi_node.spec.drivers.add()
                entry.name, entry.nodeID = d, name
                if rng.random() < 0.8:
                    entry.allocatable.count = rng.randint(0, 4)
            objects.append(csi_node)
        for k in range(rng.choice([0, 0, 1, 3])):
            d = rng.choice(CSI_DRIVERS)
            va = VolumeAttachment()
            va.metadata.name = f"va-{name}-{k}"
            va.spec.nodeName, va.spec.attacher = name, d
            va.spec.source.persistentVolumeName = rng.choice(volumes[d])
            objects.append(va)
    claims = [c.metadata.name for c in objects if isinstance(c, PersistentVolumeClaim)] + ["claim-missing"]

    def pod(name: str, node: str = "") -> Pod:
        w = make_pod(name)
        if node:
            w.node(node)
        for claim in rng.sample(claims, rng.choice([0, 1, 1, 2, 3])):
            w.pvc(claim)
        p = w.obj()
        if rng.random() < 0.2:
            v = p.spec.volumes.add()
            v.name = "inline"
            v.volumeSource.awsElasticBlockStore.volumeID = rng.choice(["vol-1", volumes[CSI_DRIVERS[0]][0]])
        return p

    running = [pod(f"run-{j}", rng.choice(nodes).metadata.name) for j in range(n * 2)]
    return new_snapshot(running, nodes), rng, objects, pod


@pytest.mark.parametrize("seed", range(30))
def test_node_volume_limits_batch_form(seed: int) -> None:
    snap, rng, objects, pod = _csi_cluster(seed)
    pl = CSILimits(FakeHandle(snapshot=snap, client=RecordingClient(objects=objects)),
                   enable_volume_limit_scaling=rng.random() < 0.7)
    assert sum(_ask(pl, snap, rng, pod(f"incoming-{k}")) for k in range(12))


def _declared_features_plugin(rng: random.Random) -> Plugin:
    """NodeDeclaredFeatures over mock features F0..F3, each needed by a pod with a container of its name, some
    no longer needed past their MaxVersion."""
    def needed_by(name: str) -> Callable[[Any], bool]:
        return lambda pod_info: any(c.name == name for c in pod_info.spec.containers)

    feats = [MockFeature(f"F{k}", needed_by(f"F{k}"), max_ver=parse_semantic("1.36.0") if k == 3 else None)
             for k in range(4)]
    return NodeDeclaredFeatures(Framework(feats), parse_semantic(rng.choice(["1.35.0", "1.37.0"])))


@pytest.mark.parametrize("seed", range(30))
def test_node_declared_features_batch_form(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    nodes = [random_node(rng, i) for i in range(n)]
    for node in nodes:
        if rng.random() < 0.8:
            # Sorted, as nodes declare them; Unknown is no registered feature.
            node.status.declaredFeatures.extend(sorted(rng.sample(["F0", "F1", "F2", "F3", "Unknown"],
                                                                  rng.randint(0, 5))))
    snap = new_snapshot([random_pod(rng, f"run-{j}", rng.choice(nodes).metadata.name) for j in range(n)], nodes)
    pl = _declared_features_plugin(rng)
    asked = 0
    for k in range(12):
        p = random_pod(rng, f"incoming-{k}")
        for name in rng.sample(["F0", "F1", "F2", "F3"], rng.choice([0, 1, 1, 2])):
            p.spec.containers.add(name=name, image="pause")
        asked += _ask(pl, snap, rng, p)
    assert asked


def _volume_binding_cluster(seed: int) -> tuple[Snapshot, random.Random, list[Any], Callable[[str], Pod]]:
    """Nodes with local PVs (of a WaitForFirstConsumer class, some already bound), claims waiting for them or
    bound, claims of an Immediate class and missing ones, and pods using them."""
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    nodes = [random_node(rng, i) for i in range(n)]
    for node in nodes:
        node.metadata.labels[HOSTNAME] = node.metadata.name
    objects: list[Any] = [make_sc("wait", "WaitForFirstConsumer"), make_sc("immediate", "Immediate")]
    claims = []
    for i in range(rng.randint(1, 2 * n)):
        pv = make_pv(f"pv-{i}", "wait", phase="Available", capacity=rng.choice(["10Gi", "50Gi", "100Gi"]),
                     node_affinity={HOSTNAME: [rng.choice(nodes).metadata.name]})
        claim = make_pvc(f"claim-{i}", "wait", request=rng.choice(["5Gi", "20Gi", "60Gi"]))
        if rng.random() < 0.2:
            claim = make_pvc(f"claim-{i}", "wait", bound_pv=pv.metadata.name, request="5Gi", phase="Bound")
            pv = bind_pv_to(pv, claim)
        objects += [pv, claim]
        claims.append(claim.metadata.name)
    objects.append(make_pvc("claim-immediate", "immediate", request="1Gi"))
    claims += ["claim-immediate", "claim-missing"]

    def pod(name: str) -> Pod:
        w = make_pod(name)
        for claim in rng.sample(claims, min(len(claims), rng.choice([0, 1, 1, 2]))):
            w.pvc(claim)
        return w.obj()

    return new_snapshot([], nodes), rng, objects, pod


@pytest.mark.parametrize("seed", range(30))
def test_volume_binding_batch_form(seed: int) -> None:
    snap, rng, objects, pod = _volume_binding_cluster(seed)
    asked = 0
    for k in range(12):
        scoring = rng.random() < 0.8
        args = VolumeBindingArgs(300, default_volume_binding_shape() if scoring else [])
        pl = VolumeBinding(args, FakeHandle(snapshot=snap, client=RecordingClient(objects=objects)),
                           enable_storage_capacity_scoring=scoring)
        asked += _ask(pl, snap, rng, pod(f"incoming-{k}"))
    assert asked


def _dra_cluster(seed: int) -> tuple[Snapshot, random.Random, list[Any], Callable[[str], Pod]]:
    """Nodes with a ResourceSlice of 0 to 2 devices (model a or b) or none, and pods with a claim whose
    request prefers a model (firstAvailable: the earlier subrequest scores higher) or takes any device, or
    without claims."""
    rng = random.Random(seed)
    n = rng.randint(1, 20)
    nodes = [random_node(rng, i) for i in range(n)]
    device_class = DeviceClass()
    device_class.metadata.name = "gpu"
    objects: list[Any] = [device_class]
    for node in nodes:
        if rng.random() < 0.2:
            continue
        s = ResourceSlice()
        s.metadata.name = f"{node.metadata.name}-slice"
        s.spec.driver, s.spec.nodeName = "example.com", node.metadata.name
        s.spec.pool.name, s.spec.pool.resourceSliceCount = node.metadata.name, 1
        for i in range(rng.randint(0, 2)):
            d = s.spec.devices.add()
            d.name = f"dev-{i}"
            d.attributes["model"].string = rng.choice("ab")
        objects.append(s)

    def pod(name: str) -> Pod:
        p = make_pod(name).uid(f"uid-{name}").obj()
        if rng.random() < 0.3:
            return p
        claim = ResourceClaim()
        claim.metadata.name, claim.metadata.namespace, claim.metadata.uid = f"{name}-claim", "default", name
        r = claim.spec.devices.requests.add()
        r.name = "req"
        if rng.random() < 0.3:
            r.exactly.deviceClassName, r.exactly.allocationMode, r.exactly.count = "gpu", "ExactCount", 1
        else:
            for model in rng.sample("ab", 2):
                sub = r.firstAvailable.add()
                sub.name, sub.deviceClassName, sub.allocationMode, sub.count = f"model-{model}", "gpu", "ExactCount", 1
                sub.selectors.add().cel.expression = f'device.attributes["example.com"].model == "{model}"'
        objects.append(claim)
        c = p.spec.resourceClaims.add()
        c.name, c.resourceClaimName = "gpu", claim.metadata.name
        return p

    return new_snapshot([], nodes), rng, objects, pod


@pytest.mark.parametrize("seed", range(30))
def test_dynamic_resources_batch_form(seed: int) -> None:
    snap, rng, objects, pod = _dra_cluster(seed)
    pods = [pod(f"incoming-{k}") for k in range(8)]  # their claims are objects too
    pl = DynamicResources(FakeHandle(snapshot=snap, client=RecordingClient(objects=objects)))
    assert sum(_ask(pl, snap, rng, p) for p in pods)
