"""docs/deploy.md section 4.1: what a user grants for a resource a plugin watches (args.watch) works on a
real API server: the YAML grants every request `run` makes for it (kube/rbac.py watched_access), the
server's authorizer agrees once it is applied, and the kubectl commands make the same objects."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.watch_helpers import NRT
from wasmsched.devcluster import DevCluster
from wasmsched.devcluster.binaries import bin_dir
from wasmsched.kube.rbac import Access, Rule, missing, service_account_grants, watched_access

from .test_deploy import SA_NAME, SA_NAMESPACE
from .test_watched_resources import nrt_crd  # noqa: F401 - the fixture

DEPLOY_MD = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def section() -> str:
    text = DEPLOY_MD.read_text()
    start = text.index("### 4.1 Granting a watched resource")
    return text[start:text.index("\n## ", start)]


def documented_objects() -> list[dict[str, Any]]:
    (block,) = re.findall(r"```yaml\n(.*?)```", section(), re.S)
    return [d for d in yaml.safe_load_all(block) if d]


def kubectl_commands() -> list[list[str]]:
    (block,) = re.findall(r"```\n(kubectl .*?)```", section(), re.S)
    return [line.split() for line in block.splitlines() if line.strip()]


def test_the_documented_rbac_grants_the_watch_requests() -> None:
    objs = documented_objects()
    assert [o["kind"] for o in objs] == ["ClusterRole", "ClusterRoleBinding"]
    wanted = watched_access([NRT])
    assert wanted == (Access("list", "topology.node.k8s.io", "noderesourcetopologies"),
                      Access("watch", "topology.node.k8s.io", "noderesourcetopologies"))
    assert missing(service_account_grants(SA_NAMESPACE, SA_NAME, objs, {}), wanted) == []
    assert missing(service_account_grants(SA_NAMESPACE, SA_NAME, [], {}), wanted) == list(wanted)


def _path(obj: dict[str, Any]) -> str:
    return f"{RBAC}/{obj['kind'].lower()}s"


@pytest.fixture
def applied(dev_cluster: DevCluster) -> Iterator[list[dict[str, Any]]]:
    objs = documented_objects()
    with dev_cluster.kube_api() as api:
        for o in objs:
            api.request_json("POST", _path(o), body=o)
        try:
            yield objs
        finally:
            for o in reversed(objs):
                api.request("DELETE", f"{_path(o)}/{o['metadata']['name']}")


def test_the_server_authorizes_them_once_applied(dev_cluster: DevCluster, applied: list[dict[str, Any]]) -> None:
    user = f"system:serviceaccount:{SA_NAMESPACE}:{SA_NAME}"
    with dev_cluster.kube_api() as api:
        for a in watched_access([NRT]):
            review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                      "spec": {"user": user, "groups": ["system:serviceaccounts", "system:authenticated"],
                               "resourceAttributes": {"verb": a.verb, "group": a.group, "resource": a.resource}}}
            body = api.request_json("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=review)
            assert body["status"].get("allowed"), (str(a), body["status"])


def test_the_kubectl_commands_work(dev_cluster: DevCluster, nrt_crd: None) -> None:  # noqa: F811
    kubectl = bin_dir() / "kubectl"
    create = [c for c in kubectl_commands() if c[:2] == ["kubectl", "create"]]
    assert len(create) == 2
    made = []
    for cmd in create:
        out = subprocess.run([str(kubectl), *cmd[1:], "--dry-run=server", "-o", "json",
                              f"--kubeconfig={dev_cluster.kubeconfig}"],
                             check=False, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        made.append(json.loads(out.stdout))
    role, binding = made
    assert [Rule.from_dict(r) for r in role["rules"]] == [Rule.from_dict(r) for r in documented_objects()[0]["rules"]]
    assert binding["roleRef"] == documented_objects()[1]["roleRef"]
    assert binding["subjects"] == documented_objects()[1]["subjects"]
    assert any(c[:3] == ["kubectl", "auth", "can-i"] for c in kubectl_commands())
