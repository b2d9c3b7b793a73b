"""Port of nodevolumelimits/csi_test.go (kube-scheduler 1.37.2), plus the csi-translation-lib subset."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from wasmsched.api.types import (
    CSIDriver,
    CSINode,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    VolumeAttachment,
)
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from wasmsched.framework.status import Code, Status, code_of
from wasmsched.framework.types import NodeInfo, PodInfo
from wasmsched.plugins import nodevolumelimits
from wasmsched.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, CSILimits
from wasmsched.plugins.nodevolumelimits.csitranslation import (
    AWS_EBS_DRIVER_NAME,
    AWS_EBS_IN_TREE_PLUGIN_NAME,
    AZURE_DISK_DRIVER_NAME,
    AZURE_FILE_DRIVER_NAME,
    CINDER_DRIVER_NAME,
    GCE_PD_DRIVER_NAME,
    PORTWORX_DRIVER_NAME,
    VSPHERE_DRIVER_NAME,
    CSISource,
    CSITranslator,
    TranslationError,
    gce_get_region_from_zones,
    kubernetes_volume_id_to_ebs_volume_id,
)
from wasmsched.plugins.nodevolumelimits.utils import is_csi_migration_on
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.testing.batch import filter_statuses
from wasmsched.testing.builders import make_pod
from wasmsched.testing.fake_handle import FakeHandle, RecordingClient

EBS = AWS_EBS_DRIVER_NAME
GCE = GCE_PD_DRIVER_NAME
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE_NAME = "node-for-max-pd-test-1"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"

MAX_COUNT = Status(Code.UNSCHEDULABLE, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])
SKIP = Status(Code.SKIP)


# --- builders (csi_test.go's st.MakePod and getFake* helpers) ---------------------------------------


def st_pod(*pvcs: str, name: str = "", namespace: str = "", uid: str | None = None) -> Pod:
    """st.MakePod().Name(name).Namespace(namespace).UID(uid).PVC(c)...: an empty namespace, as st's."""
    w = make_pod(name).namespace(namespace)
    if uid is not None:
        w.uid(uid)
    for c in pvcs:
        w.pvc(c)
    return w.obj()


def add_volume(pod: Pod, source: str, name: str = "", **attrs: Any) -> Pod:
    """Appends a volume whose `source` (a VolumeSource field) is set, possibly empty."""
    v = pod.spec.volumes.add()
    v.name = name
    sub = getattr(v.volumeSource, source)
    sub.SetInParent()
    for k, val in attrs.items():
        setattr(sub, k, val)
    return pod


def pod_with(*sources: tuple[str, str, dict[str, Any]], name: str = "", namespace: str = "") -> Pod:
    """A pod with volumes given as (volume name, VolumeSource field, fields of the source)."""
    pod = st_pod(name=name, namespace=namespace)
    for vol_name, source, attrs in sources:
        add_volume(pod, source, vol_name, **attrs)
    return pod


def pvc(name: str, namespace: str = "", volume_name: str = "", sc: str | None = None) -> PersistentVolumeClaim:
    c = PersistentVolumeClaim()
    c.metadata.name = name
    c.metadata.namespace = namespace
    if volume_name:
        c.spec.volumeName = volume_name
    if sc is not None:
        c.spec.storageClassName = sc
    return c


def ephemeral_claim(pod: Pod, vol_index: int, owned: bool = True) -> PersistentVolumeClaim:
    """The PVC of the pod's generic ephemeral volume: "<pod>-<volume>", controlled by the pod."""
    c = pvc(f"{pod.metadata.name}-{pod.spec.volumes[vol_index].name}", pod.metadata.namespace, sc=SC_NAME)
    if owned:
        ref = c.metadata.ownerReferences.add()
        ref.kind, ref.name, ref.uid, ref.controller = "Pod", pod.metadata.name, pod.metadata.uid, True
    return c


def fake_csi_pvs(volume_name: str, *drivers: str) -> list[PersistentVolume]:
    """getFakeCSIPVLister: 4 PVs per driver, in-tree EBS / hostPath sources for those plugin names."""
    out = []
    for driver in drivers:
        for j in range(4):
            handle = f"{volume_name}-{driver}-{j}"
            pv = PersistentVolume()
            pv.metadata.name = handle
            src = pv.spec.persistentVolumeSource
            if driver == AWS_EBS_IN_TREE_PLUGIN_NAME:
                src.awsElasticBlockStore.volumeID = handle
            elif driver == HOSTPATH_IN_TREE:
                src.hostPath.path = "/tmp"
            else:
                src.csi.driver = driver
                src.csi.volumeHandle = handle
            out.append(pv)
    return out


def fake_csi_pvcs(volume_name: str, sc_name: str, *drivers: str) -> list[PersistentVolumeClaim]:
    """getFakeCSIPVCLister: 4 bound PVCs per driver, an unbound one (-4), one without class (-5) and
    one bound to a missing PV (-6)."""
    out = [pvc(f"{volume_name}-{d}-{j}", volume_name=f"{volume_name}-{d}-{j}") for d in drivers for j in range(4)]
    out.append(pvc(f"{volume_name}-4", sc=sc_name))
    out.append(pvc(f"{volume_name}-5"))
    out.append(pvc(f"{volume_name}-6", sc=sc_name, volume_name="missing-in-action"))
    return out


def fake_storage_class(name: str, provisioner: str) -> StorageClass:
    sc = StorageClass()
    sc.metadata.name = name
    sc.provisioner = provisioner
    return sc


def fake_volume_attachments(count: int, *drivers: str) -> list[VolumeAttachment]:
    """buildFakeClientWithVALister: `count` VolumeAttachments per driver on the test node."""
    out = []
    for driver in drivers:
        for j in range(count):
            va = VolumeAttachment()
            va.metadata.name = f"va-{driver}-{j}"
            va.spec.nodeName = NODE_NAME
            va.spec.attacher = driver
            va.spec.source.persistentVolumeName = f"csi-{driver}-{j}"
            out.append(va)
    return out


def csi_driver(name: str, prevent_pod_scheduling_if_missing: bool | None = None) -> CSIDriver:
    d = CSIDriver()
    d.metadata.name = name
    if prevent_pod_scheduling_if_missing is not None:
        d.spec.preventPodSchedulingIfMissing = prevent_pod_scheduling_if_missing
    return d


def node_with_pods_and_volume_limits(limit_source: str, pods: list[Pod], limit: int,
                                     *drivers: str) -> tuple[NodeInfo, CSINode | None]:
    """getNodeWithPodAndVolumeLimits."""
    node = Node()
    node.metadata.name = NODE_NAME
    csi_node: CSINode | None = None

    def init_csi_node() -> CSINode:
        c = CSINode()
        c.metadata.name = NODE_NAME
        return c

    def add_drivers(add_limits: bool) -> CSINode:
        c = init_csi_node()
        for name in drivers:
            d = c.spec.drivers.add()
            d.name, d.nodeID = name, NODE_NAME
            if add_limits:
                d.allocatable.count = limit
        return c

    if limit_source == "csinode":
        csi_node = add_drivers(True)
    elif limit_source == "csinode-with-no-limit":
        csi_node = add_drivers(False)
    elif limit_source == "no-csi-driver":
        csi_node = init_csi_node()
    return NodeInfo(node, [PodInfo(p) for p in pods]), csi_node


def enable_migration_on_node(csi_node: CSINode, plugin_name: str) -> None:
    csi_node.metadata.annotations[MIGRATED_PLUGINS_ANNOTATION] = plugin_name


def assert_status(got: Status | None, want: Status | None) -> None:
    """csi_test.go's statusCmpOpts: nil equals Success; otherwise code and message."""
    if want is None:
        assert code_of(got) == Code.SUCCESS, got
        return
    assert got is not None
    assert (got.code, got.message()) == (want.code, want.message())


# --- TestCSILimits ----------------------------------------------------------------------------------

running_pod = st_pod("csi-ebs.csi.aws.com-3")
pending_volume_pod = st_pod("csi-4")
# Different pod than pending_volume_pod, but using the same unbound PVC.
unbound_pvc_pod2 = st_pod("csi-4")
missing_pv_pod = st_pod("csi-6")
no_sc_pvc_pod = st_pod("csi-5")
gce_two_vol_pod = st_pod("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
# In-tree volumes.
in_tree_one_vol_pod = st_pod("csi-kubernetes.io/aws-ebs-0")
in_tree_two_vol_pod = st_pod("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
# Pods with matching CSI driver names.
csi_ebs_one_vol_pod = st_pod("csi-ebs.csi.aws.com-0")
csi_ebs_two_vol_pod = st_pod("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
in_tree_non_migratable_one_vol_pod = st_pod("csi-kubernetes.io/hostpath-0")

ephemeral_volume_pod = add_volume(st_pod(name="abc", namespace="test", uid="12345"), "ephemeral", "xyz")
ephemeral_claim_ = ephemeral_claim(ephemeral_volume_pod, 0)
conflicting_claim = ephemeral_claim(ephemeral_volume_pod, 0, owned=False)
ephemeral_two_volume_pod = add_volume(add_volume(st_pod(name="abc", namespace="test", uid="12345II"),
                                                 "ephemeral", "x"), "ephemeral", "y")
ephemeral_claim_x = ephemeral_claim(ephemeral_two_volume_pod, 0)
ephemeral_claim_y = ephemeral_claim(ephemeral_two_volume_pod, 1)

in_tree_inline_vol_pod = pod_with(("", "awsElasticBlockStore", {"volumeID": "aws-inline1"}))
in_tree_inline_vol_pod_with_same_csi_volume_id = pod_with(
    ("", "awsElasticBlockStore", {"volumeID": "csi-ebs.csi.aws.com-1"}))
only_configmap_and_secret_vol_pod = pod_with(("", "configMap", {}), ("", "secret", {}))
pvc_pod_with_configmap_and_secret = pod_with(
    ("", "configMap", {}), ("", "secret", {}), ("", "persistentVolumeClaim", {"claimName": "csi-ebs.csi.aws.com-0"}))
ephemeral_pod_with_configmap_and_secret = pod_with(
    ("", "configMap", {}), ("", "secret", {}), ("xyz", "ephemeral", {}),
    name=ephemeral_volume_pod.metadata.name, namespace=ephemeral_volume_pod.metadata.namespace)
inline_migratable_pod_with_configmap_and_secret = pod_with(
    ("", "configMap", {}), ("", "secret", {}), ("", "awsElasticBlockStore", {"volumeID": "aws-inline1"}))


@dataclass
class LimitsCase:
    test: str
    new_pod: Pod
    driver_names: list[str]
    existing_pods: list[Pod] = field(default_factory=list)
    extra_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    filter_name: str = "csi"
    max_vols: int = 0
    va_count: int = 0
    migration_enabled: bool = False
    ephemeral_enabled: bool = False
    limit_source: str = ""
    want_status: Status | None = None
    want_pre_filter_status: Status | None = None


CSI_LIMITS_CASES = [
    LimitsCase("should count VolumeAttachments towards volume limit when no pods exist", csi_ebs_one_vol_pod,
               [EBS], max_vols=2, va_count=2, limit_source="csinode", want_status=MAX_COUNT),
    LimitsCase("should schedule pod when VolumeAttachments count does not exceed limit", csi_ebs_one_vol_pod,
               [EBS], max_vols=2, va_count=1, limit_source="csinode"),
    LimitsCase("fits when node volume limit >= new pods CSI volume", csi_ebs_one_vol_pod, [EBS],
               existing_pods=[running_pod, csi_ebs_two_vol_pod], max_vols=4, limit_source="csinode"),
    LimitsCase("doesn't when node volume limit <= pods CSI volume", csi_ebs_one_vol_pod, [EBS],
               existing_pods=[running_pod, csi_ebs_two_vol_pod], max_vols=2, limit_source="csinode",
               want_status=MAX_COUNT),
    LimitsCase("should when driver does not support volume limits", csi_ebs_one_vol_pod, [EBS],
               existing_pods=[running_pod, csi_ebs_two_vol_pod], max_vols=2, limit_source="csinode-with-no-limit"),
    # should count pending PVCs
    LimitsCase("count pending PVCs towards volume limit <= pods CSI volume", csi_ebs_one_vol_pod, [EBS],
               existing_pods=[pending_volume_pod, csi_ebs_two_vol_pod], max_vols=2, limit_source="csinode",
               want_status=MAX_COUNT),
    # two same pending PVCs should be counted as 1
    LimitsCase("count multiple pending pvcs towards volume limit >= pods CSI volume", csi_ebs_one_vol_pod, [EBS],
               existing_pods=[pending_volume_pod, unbound_pvc_pod2, csi_ebs_two_vol_pod], max_vols=4,
               limit_source="csinode"),
    # should count PVCs with invalid PV name but valid SC
    LimitsCase("should count PVCs with invalid PV name but valid SC", csi_ebs_one_vol_pod, [EBS],
               existing_pods=[missing_pv_pod, csi_ebs_two_vol_pod], max_vols=2, limit_source="csinode",
               want_status=MAX_COUNT),
    # don't count a volume which has storageclass missing
    LimitsCase("don't count pvcs with missing SC towards volume limit", csi_ebs_one_vol_pod, [EBS],
               existing_pods=[running_pod, no_sc_pvc_pod], max_vols=2, limit_source="csinode"),
    # don't count multiple volume types
    LimitsCase("count pvcs with the same type towards volume limit", csi_ebs_one_vol_pod, [EBS, GCE],
               existing_pods=[gce_two_vol_pod, csi_ebs_two_vol_pod], max_vols=2, limit_source="csinode",
               want_status=MAX_COUNT),
    LimitsCase("don't count pvcs with different type towards volume limit", gce_two_vol_pod, [EBS, GCE],
               existing_pods=[csi_ebs_two_vol_pod, running_pod], max_vols=2, limit_source="csinode"),
    # Tests for in-tree volume migration
    LimitsCase("should count in-tree volumes if migration is enabled", in_tree_one_vol_pod,
               [AWS_EBS_IN_TREE_PLUGIN_NAME, EBS], existing_pods=[in_tree_two_vol_pod], max_vols=2,
               migration_enabled=True, limit_source="csinode", want_status=MAX_COUNT),
    LimitsCase("nil csi node", in_tree_inline_vol_pod, [AWS_EBS_IN_TREE_PLUGIN_NAME, EBS],
               existing_pods=[in_tree_two_vol_pod], migration_enabled=True),
    LimitsCase("should count unbound in-tree volumes if migration is enabled", pending_volume_pod,
               [AWS_EBS_IN_TREE_PLUGIN_NAME, EBS], existing_pods=[in_tree_two_vol_pod], max_vols=2,
               migration_enabled=True, limit_source="csinode", want_status=MAX_COUNT),
    LimitsCase("should not limit pod if volume used does not report limits", in_tree_one_vol_pod,
               [AWS_EBS_IN_TREE_PLUGIN_NAME, EBS], existing_pods=[in_tree_two_vol_pod], max_vols=2,
               migration_enabled=True, limit_source="csinode-with-no-limit"),
    LimitsCase("should not count non-migratable in-tree volumes", in_tree_non_migratable_one_vol_pod,
               [HOSTPATH_IN_TREE, EBS], existing_pods=[csi_ebs_two_vol_pod], max_vols=2, migration_enabled=True,
               limit_source="csinode"),
    # mixed volumes
    LimitsCase("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
               in_tree_one_vol_pod, [AWS_EBS_IN_TREE_PLUGIN_NAME, EBS], existing_pods=[csi_ebs_two_vol_pod],
               max_vols=2, migration_enabled=True, limit_source="csinode", want_status=MAX_COUNT),
    LimitsCase("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree "
               "volumes)", in_tree_inline_vol_pod, [AWS_EBS_IN_TREE_PLUGIN_NAME, EBS],
               existing_pods=[csi_ebs_two_vol_pod, in_tree_one_vol_pod], max_vols=3, migration_enabled=True,
               limit_source="csinode", want_status=MAX_COUNT),
    LimitsCase("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree "
               "volumes)", in_tree_inline_vol_pod_with_same_csi_volume_id, [AWS_EBS_IN_TREE_PLUGIN_NAME, EBS],
               existing_pods=[csi_ebs_two_vol_pod, in_tree_one_vol_pod], max_vols=3, migration_enabled=True,
               limit_source="csinode"),
    LimitsCase("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
               csi_ebs_one_vol_pod, [AWS_EBS_IN_TREE_PLUGIN_NAME, EBS], existing_pods=[in_tree_two_vol_pod],
               max_vols=2, migration_enabled=True, limit_source="csinode", want_status=MAX_COUNT),
    # ephemeral volumes
    LimitsCase("ephemeral volume missing", ephemeral_volume_pod, [EBS], ephemeral_enabled=True,
               limit_source="csinode-with-no-limit",
               want_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                  ['looking up PVC test/abc-xyz: persistentvolumeclaims "abc-xyz" not found'])),
    LimitsCase("ephemeral volume not owned", ephemeral_volume_pod, [EBS], ephemeral_enabled=True,
               extra_claims=[conflicting_claim], limit_source="csinode-with-no-limit",
               want_status=Status.error("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)")),
    LimitsCase("ephemeral volume unbound", ephemeral_volume_pod, [EBS], ephemeral_enabled=True,
               extra_claims=[ephemeral_claim_], limit_source="csinode-with-no-limit"),
    LimitsCase("ephemeral doesn't when node volume limit <= pods CSI volume", ephemeral_volume_pod, [EBS],
               ephemeral_enabled=True, extra_claims=[ephemeral_claim_],
               existing_pods=[running_pod, csi_ebs_two_vol_pod], max_vols=2, limit_source="csinode",
               want_status=MAX_COUNT),
    LimitsCase("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", csi_ebs_one_vol_pod, [EBS],
               ephemeral_enabled=True, extra_claims=[ephemeral_claim_x, ephemeral_claim_y],
               existing_pods=[running_pod, ephemeral_two_volume_pod], max_vols=2, limit_source="csinode",
               want_status=MAX_COUNT),
    LimitsCase("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, "
               "ephemeral disabled", csi_ebs_one_vol_pod, [EBS], extra_claims=[ephemeral_claim_],
               existing_pods=[running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod], max_vols=3,
               limit_source="csinode", want_status=MAX_COUNT),
    LimitsCase("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
               csi_ebs_one_vol_pod, [EBS], ephemeral_enabled=True, extra_claims=[ephemeral_claim_],
               existing_pods=[running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod], max_vols=3,
               limit_source="csinode", want_status=MAX_COUNT),
    LimitsCase("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
               csi_ebs_one_vol_pod, [EBS], ephemeral_enabled=True, extra_claims=[ephemeral_claim_],
               existing_pods=[running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod], max_vols=5,
               limit_source="csinode"),
    LimitsCase("skip Filter when the pod only uses secrets and configmaps", only_configmap_and_secret_vol_pod,
               [EBS], max_vols=2, limit_source="csinode", want_pre_filter_status=SKIP),
    LimitsCase("don't skip Filter when the pod has pvcs", pvc_pod_with_configmap_and_secret, [EBS], max_vols=2,
               limit_source="csinode"),
    LimitsCase("don't skip Filter when the pod has ephemeral volumes", ephemeral_pod_with_configmap_and_secret,
               [EBS], ephemeral_enabled=True, limit_source="csinode-with-no-limit",
               want_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                  ['looking up PVC test/abc-xyz: persistentvolumeclaims "abc-xyz" not found'])),
    LimitsCase("don't skip Filter when the pod has inline migratable volumes",
               inline_migratable_pod_with_configmap_and_secret, [AWS_EBS_IN_TREE_PLUGIN_NAME, EBS],
               existing_pods=[in_tree_two_vol_pod], max_vols=2, migration_enabled=True, limit_source="csinode",
               want_status=MAX_COUNT),
]


def _csi_limits_plugin(case: LimitsCase) -> tuple[CSILimits, NodeInfo]:
    node_info, csi_node = node_with_pods_and_volume_limits(case.limit_source, case.existing_pods, case.max_vols,
                                                           *case.driver_names)
    objects: list[Any] = []
    if csi_node is not None:
        enable_migration_on_node(csi_node, AWS_EBS_IN_TREE_PLUGIN_NAME)
        objects.append(csi_node)
    objects += fake_csi_pvs(case.filter_name, *case.driver_names)
    objects += fake_csi_pvcs(case.filter_name, SC_NAME, *case.driver_names)
    objects += case.extra_claims
    objects.append(fake_storage_class(SC_NAME, case.driver_names[0]))
    objects += fake_volume_attachments(case.va_count, *case.driver_names)
    # kube's test leaves the CSIDriver lister and the VolumeLimitScaling gate unset.
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=objects)), enable_volume_limit_scaling=False)
    return pl, node_info


@pytest.mark.parametrize("case", CSI_LIMITS_CASES, ids=lambda c: c.test)
def test_csi_limits(case: LimitsCase) -> None:
    pl, node_info = _csi_limits_plugin(case)
    state = CycleState()
    _, got_pre_filter = pl.pre_filter(state, case.new_pod, [node_info])
    assert_status(got_pre_filter, case.want_pre_filter_status)
    if code_of(got_pre_filter) != Code.SKIP:
        assert_status(pl.filter(state, case.new_pod, node_info), case.want_status)


def test_csi_limits_filter_is_independent_of_the_existing_pods_order() -> None:
    # kube ranges over maps; the count (and so the answer) must not depend on which pod comes first.
    case = CSI_LIMITS_CASES[3]
    for pods in ([running_pod, csi_ebs_two_vol_pod], [csi_ebs_two_vol_pod, running_pod]):
        pl, node_info = _csi_limits_plugin(LimitsCase(case.test, case.new_pod, case.driver_names, pods,
                                                      max_vols=2, limit_source="csinode"))
        assert_status(pl.filter(CycleState(), case.new_pod, node_info), MAX_COUNT)


def test_volume_attachments_of_other_nodes_or_without_csi_pv_are_not_counted() -> None:
    vas = fake_volume_attachments(2, EBS)
    vas[0].spec.nodeName = "other-node"
    no_source = VolumeAttachment()
    no_source.metadata.name = "va-inline"
    no_source.spec.nodeName, no_source.spec.attacher = NODE_NAME, EBS
    no_attacher = VolumeAttachment()
    no_attacher.metadata.name = "va-no-attacher"
    no_attacher.spec.nodeName = NODE_NAME
    no_attacher.spec.source.persistentVolumeName = f"csi-{EBS}-2"
    missing_pv = VolumeAttachment()
    missing_pv.metadata.name = "va-missing-pv"
    missing_pv.spec.nodeName, missing_pv.spec.attacher = NODE_NAME, EBS
    missing_pv.spec.source.persistentVolumeName = "missing"
    node_info, csi_node = node_with_pods_and_volume_limits("csinode", [], 2, EBS)
    assert csi_node is not None
    objects: list[Any] = [csi_node, *fake_csi_pvs("csi", EBS), *fake_csi_pvcs("csi", SC_NAME, EBS),
                          no_source, no_attacher, missing_pv]
    pod = st_pod("csi-ebs.csi.aws.com-0")
    # One counted attachment (va-1) + the pod's volume fits a limit of 2; one more does not.
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=[*objects, *vas])))
    assert pl.filter(CycleState(), pod, node_info) is None
    extra = fake_volume_attachments(4, EBS)[3]
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=[*objects, *vas, extra])))
    assert_status(pl.filter(CycleState(), pod, node_info), MAX_COUNT)


def test_volume_attachment_of_a_volume_in_use_by_a_pod_counts_once() -> None:
    node_info, csi_node = node_with_pods_and_volume_limits("csinode", [csi_ebs_two_vol_pod], 3, EBS)
    assert csi_node is not None
    objects: list[Any] = [csi_node, *fake_csi_pvs("csi", EBS), *fake_csi_pvcs("csi", SC_NAME, EBS),
                          *fake_volume_attachments(3, EBS)]
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=objects)))
    # Attached: csi-...-1 and -2 (pod and attachments), csi-...-0 (attachment only) = 3; the new pod's
    # csi-...-0 is the attachment's volume but is still counted as new: 3 + 1 > 3.
    assert_status(pl.filter(CycleState(), csi_ebs_one_vol_pod, node_info), MAX_COUNT)
    # A pod of a volume already used on the node adds nothing.
    assert pl.filter(CycleState(), st_pod("csi-ebs.csi.aws.com-1"), node_info) is None


def test_filter_nodes_matches_filter_per_node() -> None:
    # Two VolumeAttachments on the test node fill its limit of 2; the other node has none.
    full, csi_node = node_with_pods_and_volume_limits("csinode", [], 2, EBS)
    assert csi_node is not None
    other_node = Node()
    other_node.metadata.name = "other"
    other = NodeInfo(other_node)
    other_csi_node = CSINode()
    other_csi_node.CopyFrom(csi_node)
    other_csi_node.metadata.name = "other"
    objects: list[Any] = [csi_node, other_csi_node, *fake_csi_pvs("csi", EBS), *fake_csi_pvcs("csi", SC_NAME, EBS),
                          *fake_volume_attachments(2, EBS)]
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=objects)))
    state = CycleState()
    got = filter_statuses(pl, state, csi_ebs_one_vol_pod, [full, other, full])
    assert got == [pl.filter(state, csi_ebs_one_vol_pod, ni) for ni in (full, other, full)]
    assert_status(got[0], MAX_COUNT)
    assert got[1] is None


# --- TestVolumeLimitScalingGate ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "enable_volume_limit_scaling", "limit_source", "limit", "csi_driver_present",
     "prevent_pod_scheduling_if_missing", "want_status"),
    [
        ("gate enabled - allow scheduling when CSIDriver exists but PreventPodSchedulingIfMissing is not set",
         True, "no-csi-driver", 0, True, False, None),
        ("gate enabled - fail when driver not installed and PreventPodSchedulingIfMissing is true",
         True, "no-csi-driver", 0, True, True,
         Status(Code.UNSCHEDULABLE, [f"{EBS} CSI driver is not installed on the node"])),
        ("gate disabled - skip driver presence check (regardless of CSIDriver presence)",
         False, "no-csi-driver", 0, True, True, None),
        ("gate enabled - driver installed within limit", True, "csinode", 2, True, True, None),
        ("gate enabled - allow scheduling when CSIDriver object missing", True, "no-csi-driver", 0, False, False,
         None),
    ],
)
def test_volume_limit_scaling_gate(name: str, enable_volume_limit_scaling: bool, limit_source: str, limit: int,
                                   csi_driver_present: bool, prevent_pod_scheduling_if_missing: bool,
                                   want_status: Status | None) -> None:
    # The pod uses a PVC that resolves to the EBS CSI driver through its PV.
    new_pod = st_pod("csi-ebs.csi.aws.com-0")
    node_info, csi_node = node_with_pods_and_volume_limits(limit_source, [], limit, EBS)
    objects: list[Any] = [*fake_csi_pvs("csi", EBS), *fake_csi_pvcs("csi", SC_NAME, EBS),
                          fake_storage_class(SC_NAME, EBS)]
    if csi_node is not None:
        objects.append(csi_node)
    if csi_driver_present:
        objects.append(csi_driver(EBS, True if prevent_pod_scheduling_if_missing else None))
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=objects)),
                   enable_volume_limit_scaling=enable_volume_limit_scaling)
    state = CycleState()
    _, pre = pl.pre_filter(state, new_pod, [node_info])
    assert code_of(pre) != Code.SKIP
    assert_status(pl.filter(state, new_pod, node_info), want_status)


def test_volume_limit_scaling_fails_without_csinode_when_the_driver_must_be_present() -> None:
    new_pod = st_pod("csi-ebs.csi.aws.com-0")
    node_info, _ = node_with_pods_and_volume_limits("", [], 0, EBS)
    objects: list[Any] = [*fake_csi_pvs("csi", EBS), *fake_csi_pvcs("csi", SC_NAME, EBS), csi_driver(EBS, True)]
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=objects)))
    assert_status(pl.filter(CycleState(), new_pod, node_info),
                  Status(Code.UNSCHEDULABLE, [f"{EBS} CSI driver is not installed on the node"]))
    # An explicit false is the same as unset.
    objects[-1] = csi_driver(EBS, False)
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=objects)))
    assert pl.filter(CycleState(), new_pod, node_info) is None


def test_registered_plugin_has_the_1_37_default_gates() -> None:
    pl = in_tree_registry()["NodeVolumeLimits"](None, FakeHandle())
    assert isinstance(pl, CSILimits)
    assert pl.name == "NodeVolumeLimits"
    assert pl.enable_volume_limit_scaling is True
    assert pl.enable_in_place_pod_vertical_scaling_scheduler_preemption is False
    assert isinstance(nodevolumelimits.new({"ignored": 1}, FakeHandle()), CSILimits)


# --- TestCSILimits_DeferredResizeSkipped ------------------------------------------------------------


def _deferred_resize_pod(*pvcs: str) -> Pod:
    pod = make_pod("p").uid("p").obj()
    for c in pvcs:
        v = pod.spec.volumes.add()
        v.name = c
        v.volumeSource.persistentVolumeClaim.claimName = c
    cond = pod.status.conditions.add()
    cond.type, cond.status, cond.reason = "PodResizePending", "True", "Deferred"
    return pod


def test_csi_limits_deferred_resize_skipped() -> None:
    pod = _deferred_resize_pod()
    node = Node()
    node.metadata.name = "node1"
    node_info = NodeInfo(node)
    pl = CSILimits(FakeHandle(), enable_in_place_pod_vertical_scaling_scheduler_preemption=True)
    res, pre = pl.pre_filter(CycleState(), pod, [node_info])
    assert res is None and code_of(pre) == Code.SKIP
    assert code_of(pl.filter(CycleState(), pod, node_info)) == Code.SUCCESS


def test_deferred_resize_with_volumes_is_only_skipped_with_the_gate() -> None:
    # With a missing PVC, Filter would reject the pod: the gate alone decides whether it runs at all.
    pod = _deferred_resize_pod("missing")
    node = Node()
    node.metadata.name = "node1"
    node_info = NodeInfo(node)
    gated = CSILimits(FakeHandle(), enable_in_place_pod_vertical_scaling_scheduler_preemption=True)
    assert code_of(gated.pre_filter(CycleState(), pod, [node_info])[1]) == Code.SKIP
    assert gated.filter(CycleState(), pod, node_info) is None
    default = CSILimits(FakeHandle())
    assert default.pre_filter(CycleState(), pod, [node_info])[1] is None
    assert code_of(default.filter(CycleState(), pod, node_info)) == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


# --- EventsToRegister and queueing hints ------------------------------------------------------------


def test_events_to_register() -> None:
    pl = CSILimits(FakeHandle())
    got = [(e.event, e.queueing_hint_fn) for e in pl.events_to_register()]
    assert got == [
        (ClusterEvent(EventResource.CSI_NODE, ActionType.ADD), None),
        (ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE), pl.is_schedulable_after_csi_node_updated),
        (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), pl.is_schedulable_after_assigned_pod_deleted),
        (ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), pl.is_schedulable_after_pvc_added),
        (ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE),
         pl.is_schedulable_after_volume_attachment_deleted),
    ]


@pytest.mark.parametrize(
    ("test", "deleted_pod", "deleted_pod_not_scheduled", "want"),
    [
        ("return a Queue when a deleted pod has a PVC", lambda: st_pod("placeholder"), False, QueueingHint.QUEUE),
        ("return a Queue when a deleted pod has a inline migratable volume",
         lambda: add_volume(st_pod(), "awsElasticBlockStore"), False, QueueingHint.QUEUE),
        ("return a QueueSkip when a deleted pod doesn't have any volume", st_pod, False,
         QueueingHint.QUEUE_SKIP),
        ("return a QueueSkip when a deleted pod is not scheduled.", lambda: st_pod("csi-ebs.csi.aws.com-0"), True,
         QueueingHint.QUEUE_SKIP),
    ],
)
def test_csi_limits_qhint(test: str, deleted_pod: Any, deleted_pod_not_scheduled: bool,
                          want: QueueingHint) -> None:
    new_pod = st_pod("csi-ebs.csi.aws.com-2")
    deleted: Pod = deleted_pod()
    deleted.spec.nodeName = "" if deleted_pod_not_scheduled else NODE_NAME
    pl = CSILimits(FakeHandle())
    assert pl.is_schedulable_after_assigned_pod_deleted(new_pod, deleted, None) == want


def test_assigned_pod_deleted_hint_more_cases() -> None:
    pl = CSILimits(FakeHandle())
    new_pod = st_pod("csi-ebs.csi.aws.com-2")
    # A nominated (not yet bound) pod held its volumes' slots too.
    nominated = st_pod("x")
    nominated.status.nominatedNodeName = NODE_NAME
    assert pl.is_schedulable_after_assigned_pod_deleted(new_pod, nominated, None) == QueueingHint.QUEUE
    # Generic ephemeral volumes are PVCs.
    eph = add_volume(st_pod(), "ephemeral", "e")
    eph.spec.nodeName = NODE_NAME
    assert pl.is_schedulable_after_assigned_pod_deleted(new_pod, eph, None) == QueueingHint.QUEUE
    # Volumes that are never counted.
    other = add_volume(add_volume(st_pod(), "configMap"), "hostPath")
    other.spec.nodeName = NODE_NAME
    assert pl.is_schedulable_after_assigned_pod_deleted(new_pod, other, None) == QueueingHint.QUEUE_SKIP
    # Not a pod: Queue, as kube's error does.
    assert pl.is_schedulable_after_assigned_pod_deleted(new_pod, pvc("x"), None) == QueueingHint.QUEUE


def _added_pvc(name: str = "", namespace: str = "") -> PersistentVolumeClaim:
    return pvc(name, namespace)


@pytest.mark.parametrize(
    ("test", "new_pod", "added_pvc", "want"),
    [
        ("a pod isn't in the same namespace as an added PVC", lambda: st_pod(namespace="ns1"),
         lambda: _added_pvc(namespace="ns2"), QueueingHint.QUEUE_SKIP),
        ("a pod is in the same namespace as an added PVC",
         lambda: add_volume(st_pod(namespace="ns1"), "persistentVolumeClaim", claimName="pvc1"),
         lambda: _added_pvc("pvc1", "ns1"), QueueingHint.QUEUE),
        ("a pod has an ephemeral volume related to an added PVC",
         lambda: add_volume(st_pod(name="pod1", namespace="ns1"), "ephemeral", "ephemeral"),
         lambda: _added_pvc("pod1-ephemeral", "ns1"), QueueingHint.QUEUE),
        ("a pod doesn't have the same PVC as an added PVC",
         lambda: add_volume(st_pod(namespace="ns1"), "persistentVolumeClaim", claimName="pvc1"),
         lambda: _added_pvc("pvc2", "ns1"), QueueingHint.QUEUE_SKIP),
        ("a pod doesn't have any PVC attached", lambda: st_pod(namespace="ns1"), lambda: _added_pvc("pvc2", "ns1"),
         QueueingHint.QUEUE_SKIP),
    ],
)
def test_csi_limits_added_pvc_qhint(test: str, new_pod: Any, added_pvc: Any, want: QueueingHint) -> None:
    pl = CSILimits(FakeHandle())
    assert pl.is_schedulable_after_pvc_added(new_pod(), None, added_pvc()) == want


def _va(attacher: str, pv_name: str | None = None, inline_driver: str | None = None) -> VolumeAttachment:
    va = VolumeAttachment()
    va.metadata.name = "volumeattachment1"
    va.spec.nodeName = "fake-node"
    va.spec.attacher = attacher
    if pv_name is not None:
        va.spec.source.persistentVolumeName = pv_name
    if inline_driver is not None:
        va.spec.source.inlineVolumeSpec.persistentVolumeSource.csi.driver = inline_driver
    return va


def _pvc_pod() -> Pod:
    return add_volume(st_pod(namespace="ns1"), "persistentVolumeClaim", claimName="pvc1")


def _aws_inline_and_pvc_pod() -> Pod:
    pod = add_volume(st_pod(namespace="ns1"), "awsElasticBlockStore", volumeID="test")
    return add_volume(pod, "persistentVolumeClaim", claimName="pvc1")


@pytest.mark.parametrize(
    ("test", "new_pod", "existing_pvc", "deleted_va", "want"),
    [
        ("a pod has PVC when VolumeAttachment is deleting", _pvc_pod,
         lambda: pvc("pvc1", "ns1", volume_name="pv1"), lambda: _va("test.storage.gke.io", pv_name="pv1"),
         QueueingHint.QUEUE),
        ("a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is deleting "
         "(match)", lambda: add_volume(st_pod(namespace="ns1"), "awsElasticBlockStore", volumeID="test"),
         None, lambda: _va("ebs.csi.aws.com", inline_driver="ebs.csi.aws.com"), QueueingHint.QUEUE),
        ("a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is deleting "
         "(no match)", lambda: add_volume(st_pod(namespace="ns1"), "gcePersistentDisk", pdName="test"),
         None, lambda: _va("ebs.csi.aws.com", inline_driver="ebs.csi.aws.com"), QueueingHint.QUEUE_SKIP),
        ("a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver) is "
         "deleting", _aws_inline_and_pvc_pod, lambda: pvc("pvc1", "ns1", volume_name="pv1"),
         lambda: _va("ebs.csi.aws.com", inline_driver="ebs.csi.aws.com"), QueueingHint.QUEUE),
        ("a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver)  is "
         "deleting", _aws_inline_and_pvc_pod, lambda: pvc("pvc1", "ns1", volume_name="pv1"),
         lambda: _va("test.storage.gke.io", pv_name="pv1"), QueueingHint.QUEUE),
        ("a pod has no PVC when VolumeAttachment is deleting", lambda: st_pod(namespace="ns1"), None,
         lambda: _va("test.storage.gke.io", pv_name="pv1"), QueueingHint.QUEUE_SKIP),
    ],
)
def test_csi_limits_deleted_volume_attachment_qhint(test: str, new_pod: Any, existing_pvc: Any, deleted_va: Any,
                                                    want: QueueingHint) -> None:
    objects = [existing_pvc()] if existing_pvc is not None else []
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=objects)))
    assert pl.is_schedulable_after_volume_attachment_deleted(new_pod(), deleted_va(), None) == want


def test_deleted_volume_attachment_hint_with_untranslatable_inline_volume_queues() -> None:
    # kube returns Queue with the translation error.
    pod = add_volume(st_pod(namespace="ns1"), "awsElasticBlockStore", volumeID="aws://zone/not-a-volume")
    pl = CSILimits(FakeHandle())
    assert pl.is_schedulable_after_volume_attachment_deleted(pod, _va("x", pv_name="pv1"), None) == QueueingHint.QUEUE


def _csi_node_with(name: str, count: int | None) -> CSINode:
    c = CSINode()
    c.metadata.name = "test-node"
    d = c.spec.drivers.add()
    d.name, d.nodeID = name, "test-node"
    if count is not None:
        d.allocatable.count = count
    return c


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("limit raised, queue", 1, 2, QueueingHint.QUEUE),
        ("limit decreased, skip queueing", 2, 1, QueueingHint.QUEUE_SKIP),
        ("limit unchanged, skip queueing", 1, 1, QueueingHint.QUEUE_SKIP),
    ],
)
def test_csi_limits_after_csi_node_updated_qhint(name: str, old: int, new: int, want: QueueingHint) -> None:
    pl = CSILimits(FakeHandle())
    test_pod = st_pod("csi-ebs.csi.aws.com-0", name="test-pod", namespace="ns1")
    assert pl.is_schedulable_after_csi_node_updated(
        test_pod, _csi_node_with("ebs.csi.aws.com", old), _csi_node_with("ebs.csi.aws.com", new)) == want


def test_csi_node_updated_hint_new_driver_or_limit_set() -> None:
    pl = CSILimits(FakeHandle())
    pod = st_pod("x")
    # A driver that gains a limit (unset counts as 0) or a new driver with a limit: Queue.
    assert pl.is_schedulable_after_csi_node_updated(
        pod, _csi_node_with(EBS, None), _csi_node_with(EBS, 1)) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_csi_node_updated(
        pod, _csi_node_with(EBS, 5), _csi_node_with(GCE, 1)) == QueueingHint.QUEUE
    # A limit removed: no more room than before as kube sees it.
    assert pl.is_schedulable_after_csi_node_updated(
        pod, _csi_node_with(EBS, 5), _csi_node_with(EBS, None)) == QueueingHint.QUEUE_SKIP


# --- in-tree volumes migrated to CSI ----------------------------------------------------------------


def _pv(name: str, source: str, labels: dict[str, str] | None = None, **attrs: Any) -> PersistentVolume:
    pv = PersistentVolume()
    pv.metadata.name = name
    pv.metadata.labels.update(labels or {})
    sub = getattr(pv.spec.persistentVolumeSource, source)
    sub.SetInParent()
    for k, v in attrs.items():
        setattr(sub, k, v)
    return pv


@pytest.mark.parametrize(
    ("source", "attrs", "labels", "counted_as"),
    [
        ("awsElasticBlockStore", {"volumeID": "aws://us-east-1a/vol-1"}, {}, (AWS_EBS_DRIVER_NAME, "vol-1")),
        ("gcePersistentDisk", {"pdName": "disk"}, {},
         (GCE_PD_DRIVER_NAME, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/disk")),
        ("gcePersistentDisk", {"pdName": "disk"}, {"topology.kubernetes.io/zone": "us-central1-a"},
         (GCE_PD_DRIVER_NAME, "projects/UNSPECIFIED/zones/us-central1-a/disks/disk")),
        ("gcePersistentDisk", {"pdName": "disk"},
         {"failure-domain.beta.kubernetes.io/zone": "us-central1-a__us-central1-c"},
         (GCE_PD_DRIVER_NAME, "projects/UNSPECIFIED/regions/us-central1/disks/disk")),
        # Zones of two regions: the translation fails and the volume is not counted.
        ("gcePersistentDisk", {"pdName": "disk"}, {"topology.kubernetes.io/zone": "us-central1-a__us-east1-b"},
         None),
        ("cinder", {"volumeID": "c1"}, {}, (CINDER_DRIVER_NAME, "c1")),
        ("azureDisk", {"diskURI": "uri", "kind": "Managed"}, {}, (AZURE_DISK_DRIVER_NAME, "uri")),
        ("azureDisk", {"diskURI": "uri", "kind": "Shared"}, {}, None),
        ("portworxVolume", {"volumeID": "px1"}, {}, (PORTWORX_DRIVER_NAME, "px1")),
        # Migratable for the library, but not migrated for the plugin (isCSIMigrationOn).
        ("azureFile", {"secretName": "s", "shareName": "share", "secretNamespace": "ns"}, {}, None),
        ("vsphereVolume", {"volumePath": "[ds] v.vmdk"}, {}, None),
        ("hostPath", {"path": "/tmp"}, {}, None),
    ],
)
def test_pv_of_migrated_in_tree_plugin_counts_under_its_csi_driver(source: str, attrs: dict[str, Any],
                                                                   labels: dict[str, str],
                                                                   counted_as: tuple[str, str] | None) -> None:
    pv = _pv("pv1", source, labels, **attrs)
    claim = pvc("claim1", "default", volume_name="pv1")
    csi_node = CSINode()
    csi_node.metadata.name = NODE_NAME
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=[pv, claim])))
    assert pl._get_csi_driver_info(csi_node, claim) == (counted_as or ("", ""))
    # Without a CSINode, migration is off for every plugin.
    assert pl._get_csi_driver_info(None, claim) == ("", "")


def test_unbound_pvc_of_migrated_in_tree_class_counts_under_the_csi_driver() -> None:
    csi_node = CSINode()
    csi_node.metadata.name = NODE_NAME
    for provisioner, want in [
        ("kubernetes.io/aws-ebs", AWS_EBS_DRIVER_NAME),
        ("kubernetes.io/gce-pd", GCE_PD_DRIVER_NAME),
        ("kubernetes.io/azure-file", ""),  # migratable, but not migrated for this plugin
        ("example.com/csi", "example.com/csi"),
    ]:
        claim = pvc("claim1", "default", sc="sc1")
        pl = CSILimits(FakeHandle(client=RecordingClient(objects=[claim, fake_storage_class("sc1", provisioner)])))
        driver, handle = pl._get_csi_driver_info(csi_node, claim)
        assert driver == want
        assert handle == (f"{pl.random_volume_id_prefix}-default/claim1" if want else "")
    # The beta annotation wins over spec.storageClassName.
    claim = pvc("claim1", "default", sc="missing")
    claim.metadata.annotations["volume.beta.kubernetes.io/storage-class"] = "sc1"
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=[claim, fake_storage_class("sc1", "d")])))
    assert pl._get_csi_driver_info(csi_node, claim)[0] == "d"


def test_inline_volume_translation_error_is_an_error_status() -> None:
    pod = add_volume(st_pod(namespace="ns1"), "awsElasticBlockStore", "v", volumeID="aws://zone/not-a-volume")
    node_info, csi_node = node_with_pods_and_volume_limits("csinode", [], 2, EBS)
    pl = CSILimits(FakeHandle(client=RecordingClient(objects=[csi_node])))
    got = pl.filter(CycleState(), pod, node_info)
    assert_status(got, Status.error(
        "converting volume(v) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID "
        "Invalid format for AWS volume (aws://zone/not-a-volume)"))


def test_pvc_with_empty_claim_name_is_an_error() -> None:
    pod = add_volume(st_pod(), "persistentVolumeClaim", "v", claimName="")
    node_info, _ = node_with_pods_and_volume_limits("", [], 0)
    assert_status(CSILimits(FakeHandle()).filter(CycleState(), pod, node_info),
                  Status.error("PersistentVolumeClaim had no name"))


@pytest.mark.parametrize(
    ("kubernetes_id", "want"),
    [
        ("vol-123", "vol-123"),
        ("something-else", "something-else"),  # bare ids are not checked
        ("aws://us-east-1a/vol-123", "vol-123"),
        ("aws:///vol-123", "vol-123"),
        ("aws://us-east-1a/vol-123/", "vol-123"),
        ("aws://us-east-1a/vol%2D123", "vol-123"),
        ("aws://us-east-1a/", TranslationError("Invalid format for AWS volume (aws://us-east-1a/)")),
        ("aws://us-east-1a/foo", TranslationError("Invalid format for AWS volume (aws://us-east-1a/foo)")),
        ("aws://us-east-1a/vol-1/2", TranslationError("Invalid format for AWS volume (aws://us-east-1a/vol-1/2)")),
        ("aws://zone:port/vol-1",
         TranslationError('Invalid disk name (aws://zone:port/vol-1): parse "aws://zone:port/vol-1": invalid port '
                          '":port" after host')),
        ("aws://zone/vol-%zz",
         TranslationError('Invalid disk name (aws://zone/vol-%zz): parse "aws://zone/vol-%zz": invalid URL escape '
                          '"%zz"')),
        ("aws://user:pw@zone/vol-1", "vol-1"),
        ("aws://us er@zone/vol-1",
         TranslationError('Invalid disk name (aws://us er@zone/vol-1): parse "aws://us er@zone/vol-1": net/url: '
                          'invalid userinfo')),
        ("aws://zone/vol-1\n",
         TranslationError('Invalid disk name (aws://zone/vol-1\n): parse "aws://zone/vol-1\\n": net/url: invalid '
                          'control character in URL')),
        ("aws://zo ne/vol-1",
         TranslationError('Invalid disk name (aws://zo ne/vol-1): parse "aws://zo ne/vol-1": invalid character " " '
                          'in host name')),
    ],
)
def test_kubernetes_volume_id_to_ebs_volume_id(kubernetes_id: str, want: str | TranslationError) -> None:
    if isinstance(want, TranslationError):
        with pytest.raises(TranslationError) as exc:
            kubernetes_volume_id_to_ebs_volume_id(kubernetes_id)
        assert str(exc.value) == str(want)
    else:
        assert kubernetes_volume_id_to_ebs_volume_id(kubernetes_id) == want


@pytest.mark.parametrize(
    ("zones", "want"),
    [
        (["us-central1-a", "us-central1-b"], "us-central1"),
        (["us-central1-a"], "us-central1"),
        (["us-central1-a", "us-east1-b"], None),
        (["us-central1"], None),
        ([], None),
    ],
)
def test_gce_get_region_from_zones(zones: list[str], want: str | None) -> None:
    if want is None:
        with pytest.raises(TranslationError):
            gce_get_region_from_zones(zones)
    else:
        assert gce_get_region_from_zones(zones) == want


@pytest.mark.parametrize(
    ("source", "attrs", "want"),
    [
        ("awsElasticBlockStore", {"volumeID": "vol-1"}, CSISource(AWS_EBS_DRIVER_NAME, "vol-1")),
        ("gcePersistentDisk", {"pdName": "pd"},
         CSISource(GCE_PD_DRIVER_NAME, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd")),
        ("cinder", {"volumeID": "c"}, CSISource(CINDER_DRIVER_NAME, "c")),
        ("azureDisk", {"diskURI": "u"}, CSISource(AZURE_DISK_DRIVER_NAME, "u")),
        ("azureFile", {"secretName": "azure-storage-account-acct-secret", "shareName": "sh"},
         CSISource(AZURE_FILE_DRIVER_NAME, "#acct#sh#v#ns1")),
        ("azureFile", {"secretName": "plain", "shareName": "sh"}, CSISource(AZURE_FILE_DRIVER_NAME, "#plain#sh#v#ns1")),
        ("vsphereVolume", {"volumePath": "p"}, CSISource(VSPHERE_DRIVER_NAME, "p")),
        ("portworxVolume", {"volumeID": "px"}, CSISource(PORTWORX_DRIVER_NAME, "px")),
    ],
)
def test_translate_in_tree_inline_volume_to_csi(source: str, attrs: dict[str, Any], want: CSISource) -> None:
    pod = add_volume(st_pod(), source, "v", **attrs)
    t = CSITranslator()
    assert t.is_inline_migratable(pod.spec.volumes[0])
    assert t.translate_in_tree_inline_volume_to_csi(pod.spec.volumes[0], "ns1") == want
    assert t.get_csi_name_from_in_tree_name(t.get_in_tree_plugin_name_from_spec(None, pod.spec.volumes[0])) == \
        want.driver


def test_translator_refusals() -> None:
    t = CSITranslator()
    vol = add_volume(st_pod(), "azureDisk", "v", diskURI="u", kind="Dedicated").spec.volumes[0]
    with pytest.raises(TranslationError, match=r"^kind\(Dedicated\) is not supported in csi migration$"):
        t.translate_in_tree_inline_volume_to_csi(vol, "ns")
    pv = _pv("pv1", "azureFile", secretName="s", shareName="sh")
    with pytest.raises(TranslationError, match="could not find a secret namespace"):
        t.translate_in_tree_pv_to_csi(pv)
    pv.spec.claimRef.namespace = "claimns"
    pv.metadata.annotations["kubernetes.io/azure-file-resource-group"] = "rg"
    assert t.translate_in_tree_pv_to_csi(pv) == CSISource(AZURE_FILE_DRIVER_NAME, "rg#s#sh#pv1#claimns")
    hostpath = add_volume(st_pod(), "hostPath", "h").spec.volumes[0]
    assert not t.is_inline_migratable(hostpath)
    with pytest.raises(TranslationError, match=r'^could not find in-tree plugin translation logic for "h"$'):
        t.translate_in_tree_inline_volume_to_csi(hostpath, "ns")
    with pytest.raises(TranslationError, match=r"^could not find CSI Driver name for plugin kubernetes\.io/hostpath$"):
        t.get_csi_name_from_in_tree_name("kubernetes.io/hostpath")
    assert t.is_migratable_intree_plugin_by_name("kubernetes.io/vsphere-volume")
    assert not t.is_migratable_intree_plugin_by_name("ebs.csi.aws.com")


def test_is_csi_migration_on() -> None:
    csi_node = CSINode()
    for name, want in [
        ("kubernetes.io/aws-ebs", True), ("kubernetes.io/portworx-volume", True), ("kubernetes.io/gce-pd", True),
        ("kubernetes.io/azure-disk", True), ("kubernetes.io/cinder", True), ("kubernetes.io/azure-file", False),
        ("kubernetes.io/vsphere-volume", False), ("", False),
    ]:
        assert is_csi_migration_on(csi_node, name) is want
        assert is_csi_migration_on(None, name) is False


# --- through the scheduler, on the embedded cluster -------------------------------------------------

_SIM_CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: ebs.csi.aws.com, nodeID: n1, allocatable: {count: 1}}]}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n2}
spec: {drivers: [{name: ebs.csi.aws.com, nodeID: n2, allocatable: {count: 1}}]}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va1}
spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: pv0}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv0}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], csi: {driver: ebs.csi.aws.com, volumeHandle: h0}}
"""
_SIM_PV_CLAIM_POD = """
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv@}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: ebs.csi.aws.com, volumeHandle: h@}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c@, namespace: default}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeName: pv@}
---
apiVersion: v1
kind: Pod
metadata: {name: p@, namespace: default}
spec:
  containers: [{name: c, image: pause}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: c@}}]
"""
_SIM_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: NodeVolumeLimits}]
"""


def test_simulation_counts_attachments_and_requeues_on_volume_attachment_delete(tmp_path: Any) -> None:
    from wasmsched.api.manifest import load_paths
    from wasmsched.config.load import load_config
    from wasmsched.simulator.simulation import Simulation

    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(_SIM_CLUSTER + "".join(_SIM_PV_CLAIM_POD.replace("@", str(i)) for i in (1, 2)))
    config = tmp_path / "config.yaml"
    config.write_text(_SIM_CONFIG)
    objs = load_paths([cluster]).by_kind
    sim = Simulation(load_config(str(config)), in_tree_registry(), explain=True)
    try:
        sim.apply(objs)
        assert [va.metadata.name for va in sim.cluster.list("VolumeAttachment")] == ["va1"]
        results = {r.name: r for r in sim.run_until_quiet().pods}
        # va1 fills n1's one EBS slot: one pod takes n2, the other fits nowhere.
        placed = [r for r in results.values() if r.node]
        waiting = [r for r in results.values() if not r.node]
        assert [r.node for r in placed] == ["n2"]
        assert len(waiting) == 1
        assert waiting[0].message.startswith("0/2 nodes are available: 2 node(s) exceed max volume count.")
        # Deleting va1 requeues the pod (it has a PVC) and frees n1's slot.
        sim.cluster.delete("VolumeAttachment", "va1")
        after = {r.name: r for r in sim.run_until_quiet().pods}
        assert after[waiting[0].name].node == "n1"
    finally:
        sim.scheduler.close()
