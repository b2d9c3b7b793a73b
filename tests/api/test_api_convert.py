"""dict <-> message conversion: round trips, special wire types and error paths."""

import copy
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from wasmsched.api import convert
from wasmsched.api.convert import ConversionError, dict_to_message, message_to_dict
from wasmsched.api.types import Node, Pod, PodDisruptionBudget, PriorityClass
from wasmsched.api.wellknown import format_go_duration, parse_go_duration, parse_rfc3339

POD_YAML = """
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: shop
  uid: 0b6f6b0e-0000-4000-8000-000000000001
  labels: {app: web, tier: "1"}
  annotations: {note: hello}
  creationTimestamp: "2024-01-02T03:04:05Z"
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u-1, controller: true}
spec:
  schedulerName: default-scheduler
  priorityClassName: high
  priority: 1000
  nodeSelector: {disk: ssd}
  volumes:
  - name: data
    emptyDir: {}
  - name: cfg
    configMap: {name: web-config}
  initContainers:
  - name: init
    image: busybox
    resources: {requests: {cpu: 200m}}
  - name: proxy
    image: envoy
    restartPolicy: Always
    resources: {requests: {cpu: 500m, memory: 64Mi}}
  containers:
  - name: app
    image: nginx:1.25
    ports: [{containerPort: 80, hostPort: 8080, protocol: TCP}]
    resources:
      requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}
      limits: {cpu: "2", memory: 2Gi}
    livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 10}
    readinessProbe: {tcpSocket: {port: 8080}}
    env:
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: creds, key: pw}}
  tolerations:
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: zone, operator: In, values: [a, b]}]
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 5
        preference: {matchExpressions: [{key: disk, operator: Exists}]}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector:
      matchExpressions: [{key: app, operator: In, values: [web]}]
    minDomains: 2
  overhead: {cpu: 10m}
status:
  phase: Pending
"""

NODE_YAML = """
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {kubernetes.io/hostname: node-1, topology.kubernetes.io/zone: a}
spec:
  podCIDR: 10.0.0.0/24
  taints:
  - {key: dedicated, value: web, effect: NoSchedule}
  - {key: node.kubernetes.io/unreachable, effect: NoExecute, timeAdded: "2024-05-06T07:08:09Z"}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110", ephemeral-storage: 100Gi}
  allocatable: {cpu: 7800m, memory: 30Gi, pods: "110", nvidia.com/gpu: "2"}
  images:
  - names: [docker.io/library/nginx:1.25, nginx:1.25]
    sizeBytes: 187000000
  conditions:
  - {type: Ready, status: "True", lastHeartbeatTime: "2024-05-06T07:08:09Z"}
  nodeInfo: {kubeletVersion: v1.34.0, architecture: amd64, operatingSystem: linux}
"""


def load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def test_pod_round_trip() -> None:
    data = load(POD_YAML)
    pod = dict_to_message(data, Pod)
    assert pod.spec.containers[0].resources.requests["memory"].string == "1Gi"
    assert pod.spec.volumes[0].volumeSource.HasField("emptyDir")
    assert pod.spec.containers[0].livenessProbe.handler.httpGet.port.strVal == "http"
    assert pod.spec.containers[0].readinessProbe.handler.tcpSocket.port.intVal == 8080
    assert pod.metadata.creationTimestamp.seconds == 1704164645
    assert message_to_dict(pod) == data


def test_node_round_trip() -> None:
    data = load(NODE_YAML)
    node = dict_to_message(data, Node)
    assert node.spec.taints[1].timeAdded.seconds > 0
    assert node.status.allocatable["cpu"].string == "7800m"
    assert message_to_dict(node) == data


def test_other_kinds_round_trip() -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
    }
    assert message_to_dict(dict_to_message(pdb, PodDisruptionBudget)) == pdb
    pc = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000000,
        "preemptionPolicy": "Never",
    }
    assert message_to_dict(dict_to_message(pc, PriorityClass)) == pc


def test_quantities_are_stored_as_kubernetes_serializes_them() -> None:
    pod = dict_to_message(
        {
            "spec": {
                "containers": [{"name": "a", "resources": {"requests": {"cpu": 0.5, "memory": "1024Mi"}}}]
            }
        },
        Pod,
    )
    requests = pod.spec.containers[0].resources.requests
    assert requests["cpu"].string == "500m"
    assert requests["memory"].string == "1Gi"


def test_int_quantity_and_whitespace() -> None:
    pod = dict_to_message({"spec": {"overhead": {"cpu": 2, "memory": " 1Gi "}}}, Pod)
    assert pod.spec.overhead["cpu"].string == "2"
    assert pod.spec.overhead["memory"].string == "1Gi"


def test_without_type_meta_and_empty_omitted() -> None:
    pod = Pod()
    pod.metadata.name = "x"
    assert message_to_dict(pod, with_type_meta=False) == {"metadata": {"name": "x"}}


def test_null_values_are_ignored() -> None:
    pod = dict_to_message({"metadata": {"name": "x", "labels": None}, "spec": None}, Pod)
    assert not pod.HasField("spec")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"spec": {"foo": 1}}, 'spec.foo: unknown field "foo"'),
        (
            {"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1x"}}}]}},
            (
                "spec.containers[0].resources.requests.cpu: quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            ),
        ),
        ({"spec": {"priority": "high"}}, "spec.priority: cannot unmarshal string into a field of type int32"),
        (
            {"spec": {"priority": 2**40}},
            ("spec.priority: cannot unmarshal number 1099511627776 into a field of type int32: out of range"),
        ),
        (
            {"spec": {"hostNetwork": "yes"}},
            "spec.hostNetwork: cannot unmarshal string into a field of type bool",
        ),
        (
            {"metadata": {"labels": {"a": 1}}},
            "metadata.labels.a: cannot unmarshal number into a field of type string",
        ),
        (
            {"spec": {"containers": {"name": "a"}}},
            "spec.containers: cannot unmarshal object into a field of type array",
        ),
        ({"spec": {"tolerations": [{}, {"bogus": 1}]}}, 'spec.tolerations[1].bogus: unknown field "bogus"'),
        ({"spec": "x"}, "spec: cannot unmarshal string into a field of type object"),
        ({"metadata": {"creationTimestamp": "yesterday"}}, "metadata.creationTimestamp: parsing time"),
        (
            {"spec": {"containers": [{"ports": [{"containerPort": 1.5}]}]}},
            "spec.containers[0].ports[0].containerPort",
        ),
        ({"kind": "Pod", "apiVersion": "v1", "spec": {"kind": "x"}}, 'spec.kind: unknown field "kind"'),
    ],
)
def test_errors_name_the_path(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConversionError) as e:
        dict_to_message(data, Pod)
    assert str(e.value).startswith(message)


def test_int_or_string_rejects_bool() -> None:
    with pytest.raises(ConversionError, match=r"spec\.minAvailable"):
        dict_to_message({"spec": {"minAvailable": True}}, PodDisruptionBudget)


def test_rfc3339() -> None:
    assert parse_rfc3339("1970-01-01T00:00:00Z") == (0, 0)
    assert parse_rfc3339("1970-01-01T01:00:00+01:00") == (0, 0)
    assert parse_rfc3339("2024-01-01T00:00:00.5Z") == (1704067200, 500_000_000)
    with pytest.raises(ValueError):
        parse_rfc3339("2024-02-30T00:00:00Z")


@pytest.mark.parametrize(
    ("text", "nanos", "formatted"),
    [
        ("0", 0, "0s"),
        ("1h2m3s", 3723 * 10**9, "1h2m3s"),
        ("1.5s", 1_500_000_000, "1.5s"),
        ("300ms", 300_000_000, "300ms"),
        ("-90s", -90 * 10**9, "-1m30s"),
        ("2h", 7200 * 10**9, "2h0m0s"),
        ("1us", 1000, "1\u00b5s"),
        ("10ns", 10, "10ns"),
    ],
)
def test_go_durations(text: str, nanos: int, formatted: str) -> None:
    assert parse_go_duration(text) == nanos
    assert format_go_duration(nanos) == formatted


@pytest.mark.parametrize("text", ["", "1", "1x", ".s", "1h-2m"])
def test_bad_go_durations(text: str) -> None:
    with pytest.raises(ValueError):
        parse_go_duration(text)


def test_conversion_tables_are_built_once_per_message_type(monkeypatch: pytest.MonkeyPatch) -> None:
    """Manifests with thousands of pods convert in one go: each message type's decode and encode
    tables are built on first use and then reused, not rebuilt per object."""
    monkeypatch.setattr(convert, "_DECODE_TABLES", {})
    monkeypatch.setattr(convert, "_ENCODE_TABLES", {})
    builds: Counter[tuple[str, str]] = Counter()

    def counting(kind: str, build: Callable[[Any], Any], tables: Callable[[], dict[str, Any]]) -> Callable[[Any], Any]:
        def wrapper(desc: Any) -> Any:
            if desc.full_name not in tables():
                builds[kind, desc.full_name] += 1
            return build(desc)

        return wrapper

    monkeypatch.setattr(convert, "_decode_table",
                        counting("decode", convert._decode_table, lambda: convert._DECODE_TABLES))
    monkeypatch.setattr(convert, "_encode_table",
                        counting("encode", convert._encode_table, lambda: convert._ENCODE_TABLES))
    data = load(POD_YAML)

    def round_trip(i: int) -> dict[str, Any]:
        d = copy.copy(data)
        d["metadata"] = dict(data["metadata"], name=f"web-{i}")
        return message_to_dict(dict_to_message(d, Pod))

    assert round_trip(0) == data
    first = Counter(builds)
    assert first[("decode", "k8s.io.api.core.v1.Pod")] == first[("encode", "k8s.io.api.core.v1.Pod")] == 1
    assert set(first.values()) == {1}
    decode_tables, encode_tables = dict(convert._DECODE_TABLES), dict(convert._ENCODE_TABLES)
    for i in range(1, 200):
        assert round_trip(i)["metadata"]["name"] == f"web-{i}"
    assert builds == first
    assert convert._DECODE_TABLES.keys() == decode_tables.keys()
    assert all(convert._DECODE_TABLES[k] is t for k, t in decode_tables.items())
    assert convert._ENCODE_TABLES.keys() == encode_tables.keys()
    assert all(convert._ENCODE_TABLES[k] is t for k, t in encode_tables.items())
