"""Random storage for differential cases: StorageClasses, PersistentVolumes and their claims, CSIDrivers,
CSINodes with per-driver attach limits, VolumeAttachments, and pod volumes (claims, inline GCE PD and AWS
EBS disks, CSI ephemeral volumes) for the volume plugins (VolumeRestrictions, VolumeZone,
NodeVolumeLimits, VolumeBinding).

The storage comes from its own random source (seeded by the case's seed), drawn after the rest of the
case, so a seed without storage gives the same case as before storage existed.

Every claim a pod can get bound with is already bound (PV.spec.claimRef and PVC.spec.volumeName, both
Bound, the PV controller's bind-completed annotation): VolumeBinding's PreBind then has nothing to wait
for, as there is no PV controller on either side. Unbound claims are only ones no node can satisfy: of an
Immediate class (PreFilter rejects them), or of a WaitForFirstConsumer class without a provisioner and no
available PersistentVolume of that class (Filter rejects every node).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from tests.differential.context import HOSTNAME, REGION, REGION_OF, ZONE, ZONES, Ctx, NodeFacts

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GCE_PD_DRIVER = "pd.csi.storage.gke.io"
EBS_DRIVER = "ebs.csi.aws.com"
HOSTPATH_DRIVER = "hostpath.csi.k8s.io"
DRIVERS = (GCE_PD_DRIVER, EBS_DRIVER, HOSTPATH_DRIVER)
# The in-tree plugin each migrated driver replaces (CSINode's migrated-plugins annotation names them).
IN_TREE_PLUGIN = {GCE_PD_DRIVER: "kubernetes.io/gce-pd", EBS_DRIVER: "kubernetes.io/aws-ebs"}
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
WFFC = "WaitForFirstConsumer"
# (name, provisioner, binding mode or None for the API server's default, Immediate)
STORAGE_CLASSES: tuple[tuple[str, str, str | None], ...] = (
    ("fast", GCE_PD_DRIVER, WFFC),
    ("standard", EBS_DRIVER, "Immediate"),
    ("local", NO_PROVISIONER, WFFC),
    ("hostpath", HOSTPATH_DRIVER, None),
)
MISSING_CLASS = "gold"  # a class no case declares
# Small pools of disk names so that pods share (and conflict on) disks.
PD_NAMES = ("disk-1", "disk-2", "disk-3")
EBS_IDS = ("vol-0a1", "vol-0b2")
SIZES = ("1Gi", "5Gi", "10Gi")
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany")
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"


@dataclass
class Claim:
    namespace: str
    name: str
    bound: bool


@dataclass
class Storage:
    """The storage objects of a case, by kind, and the claims pods may use."""

    by_kind: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    drivers: list[str] = field(default_factory=list)

    def add(self, obj: dict[str, Any]) -> None:
        self.by_kind.setdefault(obj["kind"], []).append(obj)


def add_storage(ctx: Ctx, running: list[dict[str, Any]],
                pending: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Storage objects by kind (empty for most seeds); gives some pods volumes (in place)."""
    rng = random.Random(f"{ctx.seed}/storage")
    if rng.random() >= ctx.knobs.storage:
        return {}
    saved, ctx.rng = ctx.rng, rng  # ctx.chance and ctx.tag draw from the storage source
    try:
        st = Storage()
        _drivers(ctx, st)
        classes = _classes(ctx, st)
        _csinodes(ctx, st)
        _volumes_and_claims(ctx, st, classes)
        _attachments(ctx, st)
        for pod in running:
            if ctx.chance(ctx.knobs.pod_volumes):
                _pod_volumes(ctx, st, pod, running=True)
        for pod in pending:
            if ctx.chance(ctx.knobs.pod_volumes):
                _pod_volumes(ctx, st, pod, running=False)
        return st.by_kind
    finally:
        ctx.rng = saved


def _drivers(ctx: Ctx, st: Storage) -> None:
    rng = ctx.rng
    st.drivers = sorted(rng.sample(DRIVERS, rng.randint(1, len(DRIVERS))))
    for name in st.drivers:
        if not ctx.chance(0.6):
            continue  # a driver without a CSIDriver object is assumed to be CSI and allowed anywhere
        ctx.tag("volume.csidriver")
        spec: dict[str, Any] = {"attachRequired": ctx.chance(0.8)}
        if ctx.chance(0.3):
            ctx.tag("volume.csidriver.prevent_if_missing")
            spec["preventPodSchedulingIfMissing"] = True
        if ctx.chance(0.2):
            spec["storageCapacity"] = False
        st.add({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name}, "spec": spec})


def _classes(ctx: Ctx, st: Storage) -> list[tuple[str, str, str | None]]:
    rng = ctx.rng
    chosen = rng.sample(STORAGE_CLASSES, rng.randint(1, len(STORAGE_CLASSES)))
    chosen.sort(key=STORAGE_CLASSES.index)
    for name, provisioner, mode in chosen:
        ctx.tag("volume.storage_class")
        sc: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                              "metadata": {"name": name}, "provisioner": provisioner}
        if mode is not None:
            sc["volumeBindingMode"] = mode
        ctx.tag("volume.class.wffc" if mode == WFFC else "volume.class.immediate")
        if ctx.chance(0.3):
            ctx.tag("volume.class.allowed_topologies")
            zones = sorted(rng.sample(ZONES, rng.randint(1, 2)))
            sc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": zones}]}]
        st.add(sc)
    return chosen


def _csinodes(ctx: Ctx, st: Storage) -> None:
    rng = ctx.rng
    for node in ctx.nodes:
        if not ctx.chance(0.75):
            continue
        ctx.tag("volume.csinode")
        drivers = []
        for name in sorted(rng.sample(st.drivers, rng.randint(0, len(st.drivers)))):
            d: dict[str, Any] = {"name": name, "nodeID": f"{node.name}-id"}
            if ZONE in node.labels and ctx.chance(0.5):
                d["topologyKeys"] = [ZONE]
            if ctx.chance(0.7):
                ctx.tag("volume.csinode.allocatable")
                d["allocatable"] = {"count": rng.randint(0, 3)}
            drivers.append(d)
        meta: dict[str, Any] = {"name": node.name}
        migrated = [IN_TREE_PLUGIN[d["name"]] for d in drivers if d["name"] in IN_TREE_PLUGIN]
        if migrated and ctx.chance(0.7):
            ctx.tag("volume.csinode.migrated")
            meta["annotations"] = {MIGRATED_PLUGINS_ANNOTATION: ",".join(sorted(migrated))}
        st.add({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta,
                "spec": {"drivers": drivers}})


def _zone_labels(ctx: Ctx) -> dict[str, str]:
    rng = ctx.rng
    zones = sorted(rng.sample(ZONES, 1 if ctx.chance(0.7) else 2))
    beta = ctx.chance(0.25)
    ctx.tag("volume.pv.zone_beta" if beta else "volume.pv.zone")
    if len(zones) > 1:
        ctx.tag("volume.pv.multi_zone")
    labels = {BETA_ZONE if beta else ZONE: "__".join(zones)}
    if ctx.chance(0.4):
        ctx.tag("volume.pv.region")
        labels[BETA_REGION if beta else REGION] = "__".join(sorted({REGION_OF[z] for z in zones}))
    return labels


def _node_affinity(ctx: Ctx, nodes: list[NodeFacts]) -> dict[str, Any]:
    rng = ctx.rng
    if nodes and ctx.chance(0.5):
        ctx.tag("volume.pv.node_affinity.hostname")
        names = sorted(n.name for n in rng.sample(nodes, min(len(nodes), rng.randint(1, 2))))
        expr = {"key": HOSTNAME, "operator": "In", "values": names}
    else:
        ctx.tag("volume.pv.node_affinity.zone")
        expr = {"key": ZONE, "operator": "In", "values": sorted(rng.sample(ZONES, rng.randint(1, 2)))}
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}}


def _volumes_and_claims(ctx: Ctx, st: Storage, classes: list[tuple[str, str, str | None]]) -> None:
    rng = ctx.rng
    class_names = [c[0] for c in classes]
    for i in range(rng.randint(1, 6)):
        name = f"pv-{i}"
        source_kind = rng.choice(("csi", "csi", "gce", "ebs", "local"))
        spec: dict[str, Any] = {"capacity": {"storage": rng.choice(SIZES)}}
        rwop = ctx.chance(0.25)
        if rwop:
            ctx.tag("volume.rwop")
            spec["accessModes"] = ["ReadWriteOncePod"]  # may not be combined with other modes
        else:
            spec["accessModes"] = sorted(rng.sample(ACCESS_MODES, rng.randint(1, 2)))
        spec["persistentVolumeReclaimPolicy"] = "Retain"
        if source_kind == "csi":
            ctx.tag("volume.pv.csi")
            spec["csi"] = {"driver": rng.choice(st.drivers), "volumeHandle": f"handle-{i}"}
        elif source_kind == "gce":
            ctx.tag("volume.pv.gce_pd")
            spec["gcePersistentDisk"] = {"pdName": f"pd-{i}", "fsType": "ext4"}
        elif source_kind == "ebs":
            ctx.tag("volume.pv.aws_ebs")
            spec["awsElasticBlockStore"] = {"volumeID": f"vol-pv{i}", "fsType": "ext4"}
        else:
            ctx.tag("volume.pv.local")
            spec["local"] = {"path": f"/mnt/disks/{name}"}
        labels: dict[str, str] = {}
        if source_kind != "local" and ctx.chance(0.5):
            labels = _zone_labels(ctx)
        if source_kind == "local" or ctx.chance(0.3):
            spec["nodeAffinity"] = _node_affinity(ctx, ctx.nodes)
        r = rng.random()
        if r < 0.75:
            spec["storageClassName"] = rng.choice(class_names)
        elif r < 0.85:
            spec["storageClassName"] = MISSING_CLASS
        meta: dict[str, Any] = {"name": name}
        if labels:
            meta["labels"] = labels
        pv: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec}
        if ctx.chance(0.8):
            # bound, as the PV controller leaves a bound pair
            ctx.tag("volume.pvc.bound")
            ns = rng.choice(ctx.namespaces) if ctx.chance(0.3) else "default"
            claim = f"claim-{i}"
            spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": claim,
                                "uid": ctx.uid("PersistentVolumeClaim", ns, claim), "apiVersion": "v1"}
            pv["metadata"]["annotations"] = {"pv.kubernetes.io/bound-by-controller": "yes"}
            pv["status"] = {"phase": "Bound"}
            pvc_spec: dict[str, Any] = {"accessModes": list(spec["accessModes"]),
                                        "resources": {"requests": {"storage": spec["capacity"]["storage"]}},
                                        "volumeName": name}
            pvc_spec["storageClassName"] = spec.get("storageClassName", "")
            st.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": claim, "namespace": ns,
                                 "annotations": {BIND_COMPLETED: "yes", BOUND_BY_CONTROLLER: "yes"}},
                    "spec": pvc_spec,
                    "status": {"phase": "Bound", "accessModes": list(spec["accessModes"]),
                               "capacity": {"storage": spec["capacity"]["storage"]}}})
            st.claims.append(Claim(ns, claim, True))
        else:
            # available, of a class no unbound claim uses (claims in the oracle are never bound later)
            ctx.tag("volume.pv.available")
            spec["storageClassName"] = MISSING_CLASS
            pv["status"] = {"phase": "Available"}
        st.add(pv)
    if ctx.chance(0.15):
        # a claim bound to a volume that does not exist (deleted, or pre-bound to one not created yet)
        ctx.tag("volume.pvc.missing_pv")
        _claim(ctx, st, "claim-lost", {"volumeName": "pv-gone", "storageClassName": rng.choice(class_names)},
               bound=True)
    for j in range(rng.randint(0, 2)):
        # unbound claims no node can satisfy (see the module docstring)
        r = rng.random()
        name = f"unbound-{j}"
        unbound_classes = [c for c, prov, mode in classes if mode != WFFC or prov == NO_PROVISIONER]
        if r < 0.6 and unbound_classes:
            cls = rng.choice(unbound_classes)
            ctx.tag("volume.pvc.unbound")
            _claim(ctx, st, name, {"storageClassName": cls}, bound=False)
        elif r < 0.8:
            ctx.tag("volume.pvc.no_class")
            _claim(ctx, st, name, {}, bound=False)
        else:
            ctx.tag("volume.pvc.missing_class")
            _claim(ctx, st, name, {"storageClassName": MISSING_CLASS}, bound=False)


def _claim(ctx: Ctx, st: Storage, name: str, extra: dict[str, Any], bound: bool) -> None:
    ns = ctx.rng.choice(ctx.namespaces) if ctx.chance(0.3) else "default"
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    spec.update(extra)
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    status: dict[str, Any] = {"phase": "Pending"}
    if bound:
        meta["annotations"] = {BIND_COMPLETED: "yes"}
        status = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    st.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec, "status": status})
    st.claims.append(Claim(ns, name, bound))


def _attachments(ctx: Ctx, st: Storage) -> None:
    """VolumeAttachments of CSI volumes to nodes (NodeVolumeLimits counts those no pod there uses)."""
    rng = ctx.rng
    csi = [pv for pv in st.by_kind.get("PersistentVolume", []) if "csi" in pv["spec"]]
    if not csi or not ctx.nodes or not ctx.chance(0.4):
        return
    for pv in rng.sample(csi, rng.randint(1, len(csi))):
        ctx.tag("volume.attachment")
        node = rng.choice(ctx.nodes).name
        name = f"va-{pv['metadata']['name']}-{node}"
        st.add({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": name},
                "spec": {"attacher": pv["spec"]["csi"]["driver"], "nodeName": node,
                         "source": {"persistentVolumeName": pv["metadata"]["name"]}},
                "status": {"attached": True}})


def _pod_volumes(ctx: Ctx, st: Storage, pod: dict[str, Any], running: bool) -> None:
    rng = ctx.rng
    ns = pod["metadata"]["namespace"]
    volumes: list[dict[str, Any]] = []
    # kube's NodeVolumeLimits names the first missing driver of a map it walks in Go's random order: a pod
    # uses at most one driver that prevents scheduling when missing, so that the message is determined.
    prevent = {d["metadata"]["name"] for d in st.by_kind.get("CSIDriver", [])
               if d["spec"].get("preventPodSchedulingIfMissing")}
    preventing: str | None = None
    for i in range(rng.randint(1, 3)):
        v: dict[str, Any] = {"name": f"vol-{i}"}
        # mostly bound claims: an unbound or missing one rejects the pod in PreFilter, before the other
        # volume plugins have their say
        bound = [c for c in st.claims if c.namespace == ns and c.bound]
        unbound = [c for c in st.claims if c.namespace == ns and not c.bound]
        r = rng.random()
        if (r < 0.45 and not bound) or (0.45 <= r < 0.52 and running) or (0.45 <= r < 0.5 and not unbound):
            r = 0.52 + (r % 0.1)  # an inline disk instead
        if r < 0.45:
            ctx.tag("volume.pod.pvc")
            v["persistentVolumeClaim"] = {"claimName": rng.choice(bound).name}
            if ctx.chance(0.15):
                v["persistentVolumeClaim"]["readOnly"] = True
        elif r < 0.5:
            ctx.tag("volume.pod.pvc_unbound")
            v["persistentVolumeClaim"] = {"claimName": rng.choice(unbound).name}
        elif r < 0.52:
            ctx.tag("volume.pod.pvc_missing")
            v["persistentVolumeClaim"] = {"claimName": "no-such-claim"}
        elif r < 0.7:
            ctx.tag("volume.pod.gce_pd")
            v["gcePersistentDisk"] = {"pdName": rng.choice(PD_NAMES), "fsType": "ext4"}
            if ctx.chance(0.4):
                ctx.tag("volume.pod.read_only")
                v["gcePersistentDisk"]["readOnly"] = True
        elif r < 0.82:
            ctx.tag("volume.pod.aws_ebs")
            v["awsElasticBlockStore"] = {"volumeID": rng.choice(EBS_IDS), "fsType": "ext4"}
        elif r < 0.92:
            ctx.tag("volume.pod.csi_ephemeral")
            v["csi"] = {"driver": rng.choice(DRIVERS), "volumeAttributes": {"size": "1Gi"}}
        else:
            v["emptyDir"] = {}
        driver = _volume_driver(st, ns, v)
        if driver in prevent:
            if preventing is None:
                preventing = driver
            elif driver != preventing:
                v = {"name": v["name"], "emptyDir": {}}
        volumes.append(v)
    pod["spec"]["volumes"] = volumes


def _volume_driver(st: Storage, ns: str, v: dict[str, Any]) -> str | None:
    """The CSI driver a pod volume is (or is translated to), through its bound claim's PV for a claim."""
    if "persistentVolumeClaim" in v:
        name = v["persistentVolumeClaim"]["claimName"]
        claim = next((c for c in st.by_kind.get("PersistentVolumeClaim", [])
                      if c["metadata"]["name"] == name and c["metadata"]["namespace"] == ns), None)
        pv_name = claim["spec"].get("volumeName") if claim is not None else None
        pv = next((p for p in st.by_kind.get("PersistentVolume", []) if p["metadata"]["name"] == pv_name), None)
        if pv is None:
            return None
        v = pv["spec"]
    if "csi" in v:
        driver: str = v["csi"]["driver"]
        return driver
    if "gcePersistentDisk" in v:
        return GCE_PD_DRIVER
    if "awsElasticBlockStore" in v:
        return EBS_DRIVER
    return None
