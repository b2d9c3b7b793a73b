"""The API server's create-time merge of label keys into selectors (strategy.go PrepareForCreate)."""

from __future__ import annotations

from wasmsched.api.manifest import load_text
from wasmsched.embedded.memory import MemoryCluster

POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: web, team: a}}
spec:
  containers: [{name: c, image: x}]
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {tier: x}}
        topologyKey: zone
        matchLabelKeys: [app, missing]
        mismatchLabelKeys: [team]
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        podAffinityTerm: {labelSelector: {}, topologyKey: zone, mismatchLabelKeys: [app]}
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}, matchLabelKeys: [team]}
"""


def _exprs(selector: object) -> list[tuple[str, str, list[str]]]:
    return [(e.key, e.operator, list(e.values)) for e in selector.matchExpressions]  # type: ignore[attr-defined]


def test_created_pod_has_its_label_keys_merged_into_the_selectors() -> None:
    cluster = MemoryCluster()
    pod = cluster.create(load_text(POD).of_kind("Pod")[0])
    required = pod.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution
    # a missing label adds nothing; match keys give In, mismatch keys NotIn
    assert _exprs(required[0].labelSelector) == [("app", "In", ["web"]), ("team", "NotIn", ["a"])]
    anti = pod.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm
    assert _exprs(anti.labelSelector) == [("app", "NotIn", ["web"])]
    assert _exprs(pod.spec.topologySpreadConstraints[0].labelSelector) == [("team", "In", ["a"])]
    # the keys themselves stay, as the API server keeps them
    assert list(required[0].matchLabelKeys) == ["app", "missing"]
