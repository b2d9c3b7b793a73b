"""deploy/: every object is accepted by a real API server (server-side dry-run create), the ConfigMaps'
configurations load with wasmsched's own loader, the files agree with each other, and the RBAC grants
every request wasmsched makes (wasmsched/kube/rbac.py), together with the bootstrap roles it binds as
the server reports them."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from wasmsched.api.errors import ApiError
from wasmsched.config.load import load_config
from wasmsched.devcluster import DevCluster
from wasmsched.devcluster.kubeconfig import write_kubeconfig
from wasmsched.kube.api import KubeApi
from wasmsched.kube.rbac import (
    Access,
    Grant,
    Rule,
    lease_access,
    missing,
    scheduler_access,
    service_account_grants,
)

from .helpers import wait_for
from .run_helpers import SchedulerProcess, create_node, create_pod, events, kube_api, node_json, pod_json, wait_bound

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SA_NAMESPACE, SA_NAME = "kube-system", "wasmsched"
BOOTSTRAP_ROLES = ("system:kube-scheduler", "system:volume-scheduler", "system:auth-delegator")
# config file -> (profile's schedulerName, Lease name): the two ways docs/deploy.md describes.
MODES = {
    "config-second-scheduler.yaml": ("wasmsched", "wasmsched"),
    "config-only-scheduler.yaml": ("default-scheduler", "kube-scheduler"),
}


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d is not None]


def all_documents() -> list[tuple[str, dict[str, Any]]]:
    return [(f.name, d) for f in sorted(DEPLOY.glob("*.yaml")) for d in documents(f.name)]


def the(kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for _, d in all_documents() if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, (kind, name, len(found))
    return found[0]


# ---- pure checks ---------------------------------------------------------------------------------

@pytest.mark.parametrize("config", sorted(MODES))
def test_config_map_holds_a_configuration_wasmsched_loads(tmp_path: Path, config: str) -> None:
    (cm,) = documents(config)
    assert (cm["kind"], cm["metadata"]["name"], cm["metadata"]["namespace"]) == (
        "ConfigMap", "wasmsched-config", "kube-system")
    path = tmp_path / "config.yaml"
    path.write_text(cm["data"]["config.yaml"])
    cfg = load_config(str(path))
    scheduler_name, lease = MODES[config]
    assert [p.scheduler_name for p in cfg.profiles] == [scheduler_name]
    le = cfg.leader_election
    assert (le["leaderElect"], le["resourceLock"], le["resourceNamespace"], le["resourceName"]) == (
        True, "leases", "kube-system", lease)
    # The wasm plugin is configured, at the path the image puts it.
    nodenumber = next(pc for pc in cfg.profiles[0].plugin_config if pc.name == "NodeNumber")
    assert isinstance(nodenumber.args, dict) and nodenumber.args["guestURL"] == _image_wasm_path()


def _image_wasm_path() -> str:
    """Where deploy/Containerfile copies examples/nodenumber/nodenumber.wasm."""
    text = (DEPLOY / "Containerfile").read_text()
    m = re.search(r"^COPY examples/nodenumber/nodenumber\.wasm (\S+)$", text, re.MULTILINE)
    assert m, "Containerfile copies no nodenumber.wasm"
    return m.group(1)


def test_deployment_agrees_with_the_other_files() -> None:
    dep = the("Deployment")
    spec = dep["spec"]["template"]["spec"]
    assert dep["spec"]["replicas"] == 2
    assert (spec["serviceAccountName"], dep["metadata"]["namespace"]) == (SA_NAME, SA_NAMESPACE)
    assert the("ServiceAccount")["metadata"] == {"name": SA_NAME, "namespace": SA_NAMESPACE}
    (c,) = spec["containers"]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["config"]["configMap"]["name"] == "wasmsched-config"
    assert f"--config={mounts['config']}/config.yaml" in c["args"]
    assert "--leader-elect=true" in c["args"]
    port = next(a for a in c["args"] if a.startswith("--secure-port=")).split("=", 1)[1]
    assert c["ports"] == [{"name": "https", "containerPort": int(port), "protocol": "TCP"}]
    assert (c["livenessProbe"]["httpGet"], c["readinessProbe"]["httpGet"]) == (
        {"path": "/livez", "port": "https", "scheme": "HTTPS"}, {"path": "/readyz", "port": "https", "scheme": "HTTPS"})
    # Non-root, read-only root filesystem: the compiled-module cache and /tmp are the writable volumes.
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    env = {e["name"]: e["value"] for e in c["env"]}
    assert env["WASMSCHED_CACHE_DIR"] == mounts["cache"] and "emptyDir" in volumes["cache"]
    assert mounts["tmp"] == "/tmp" and "emptyDir" in volumes["tmp"]
    assert c["resources"]["requests"].keys() == {"cpu", "memory"}


def test_rule_matching() -> None:
    rule = Rule(("get", "update"), ("coordination.k8s.io",), ("leases",), ("wasmsched",))
    assert rule.allows(Access("get", "coordination.k8s.io", "leases", namespace="kube-system", name="wasmsched"))
    assert not rule.allows(Access("get", "coordination.k8s.io", "leases", name="kube-scheduler"))
    assert not rule.allows(Access("create", "coordination.k8s.io", "leases"))
    assert not rule.allows(Access("get", "", "leases", name="wasmsched"))
    assert Rule(("create",), ("",), ("pods/binding",)).allows(Access("create", "", "pods", "binding"))
    assert not Rule(("create",), ("",), ("pods",)).allows(Access("create", "", "pods", "binding"))
    assert Rule(("*",), ("*",), ("*",)).allows(Access("patch", "", "pods", "status"))
    assert Rule(("patch",), ("",), ("*/status",)).allows(Access("patch", "", "pods", "status"))
    assert Rule(("patch",), ("",), ("pods/*",)).allows(Access("patch", "", "pods", "status"))
    in_ns = Grant((Rule(("get",), ("",), ("pods",)),), "a")
    assert in_ns.allows(Access("get", "", "pods", namespace="a"))
    assert not in_ns.allows(Access("get", "", "pods", namespace="b"))
    assert not in_ns.allows(Access("get", "", "pods"))  # every namespace
    assert missing([in_ns], [Access("get", "", "pods", namespace="a"), Access("list", "", "pods")]) == [
        Access("list", "", "pods")]


def test_grants_follow_bindings_to_roles() -> None:
    rbac = documents("rbac.yaml")
    grants = service_account_grants(SA_NAMESPACE, SA_NAME, rbac, {})
    # Bootstrap roles not given: their bindings grant nothing; the Role grants the Lease in kube-system only.
    assert missing(grants, lease_access(SA_NAMESPACE, "wasmsched")) == []
    assert missing(grants, lease_access("default", "wasmsched")) == list(lease_access("default", "wasmsched"))
    assert missing(grants, [Access("list", "scheduling.k8s.io", "priorityclasses")]) == []
    assert service_account_grants("default", SA_NAME, rbac, {}) == []


# ---- against the API server ----------------------------------------------------------------------

def _create(api: KubeApi, api_resources: dict[tuple[str, str], tuple[str, bool]], obj: dict[str, Any],
            dry_run: bool) -> Any:
    path, namespaced = api_resources[(obj["apiVersion"], obj["kind"])]
    prefix = f"namespaces/{obj['metadata']['namespace']}/" if namespaced else ""
    return api.request_json("POST", path.format(ns=prefix), body=obj, query={"dryRun": "All"} if dry_run else None)


@pytest.mark.parametrize("where", [f"{f}#{i}" for f, d in [(p.name, documents(p.name))
                                                            for p in sorted(DEPLOY.glob("*.yaml"))]
                                   for i in range(len(d))])
def test_every_object_passes_a_server_side_dry_run(
        dev_cluster: DevCluster, api_resources: dict[tuple[str, str], tuple[str, bool]], where: str) -> None:
    name, index = where.split("#")
    obj = documents(name)[int(index)]
    with dev_cluster.kube_api() as api:
        try:
            _create(api, api_resources, obj, dry_run=True)
        except ApiError as e:
            pytest.fail(f"{where} ({obj['kind']} {obj['metadata']['name']}): HTTP {e.status} {e.reason}: {e}")


def _server_cluster_roles(dev_cluster: DevCluster) -> dict[str, list[Rule]]:
    roles: dict[str, list[Rule]] = {}
    with dev_cluster.kube_api() as api:
        for name in BOOTSTRAP_ROLES:
            role = api.request_json("GET", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}")
            roles[name] = [Rule.from_dict(r) for r in role["rules"]]
    return roles


@pytest.mark.parametrize("config", sorted(MODES))
def test_rbac_grants_every_request_wasmsched_makes(dev_cluster: DevCluster, config: str) -> None:
    roles = _server_cluster_roles(dev_cluster)
    rbac = documents("rbac.yaml")
    wanted = scheduler_access(SA_NAMESPACE, MODES[config][1])
    grants = service_account_grants(SA_NAMESPACE, SA_NAME, rbac, roles)
    assert [str(a) for a in missing(grants, wanted)] == []
    # The bootstrap roles alone lack what deploy/ adds, so the check above is not vacuous.
    bootstrap_only = [d for d in rbac if d.get("roleRef", {}).get("name") in BOOTSTRAP_ROLES]
    lacking = missing(service_account_grants(SA_NAMESPACE, SA_NAME, bootstrap_only, roles), wanted)
    assert Access("list", "scheduling.k8s.io", "priorityclasses") in lacking
    lease = MODES[config][1]
    lease_get = Access("get", "coordination.k8s.io", "leases", namespace=SA_NAMESPACE, name=lease)
    assert (lease_get in lacking) == (lease != "kube-scheduler")


@pytest.fixture
def applied_rbac(dev_cluster: DevCluster, api_resources: dict[tuple[str, str], tuple[str, bool]]) -> Iterator[None]:
    """deploy/rbac.yaml created for real (the server's own authorizer then answers), deleted afterwards."""
    objs = documents("rbac.yaml")
    created: list[str] = []
    with dev_cluster.kube_api() as api:
        try:
            for obj in objs:
                _create(api, api_resources, obj, dry_run=False)
                path, namespaced = api_resources[(obj["apiVersion"], obj["kind"])]
                prefix = f"namespaces/{obj['metadata']['namespace']}/" if namespaced else ""
                created.append(f"{path.format(ns=prefix)}/{obj['metadata']['name']}")
            yield
        finally:
            for path in reversed(created):
                api.request_json("DELETE", path)


@pytest.mark.parametrize("config", sorted(MODES))
def test_server_authorizes_every_request_for_the_service_account(
        dev_cluster: DevCluster, applied_rbac: None, config: str) -> None:
    """The same question put to the API server's authorizer: a SubjectAccessReview per request."""
    user = f"system:serviceaccount:{SA_NAMESPACE}:{SA_NAME}"
    groups = ["system:serviceaccounts", f"system:serviceaccounts:{SA_NAMESPACE}", "system:authenticated"]
    access = list(scheduler_access(SA_NAMESPACE, MODES[config][1]))
    # The RBAC authorizer learns of the roles just created from its informers: a loaded server answers from a
    # cache that lags by a moment, so the denied requests are asked again until a deadline.
    deadline = time.monotonic() + 15
    with dev_cluster.kube_api() as api:
        while True:
            denied = []
            for a in access:
                attrs = {"verb": a.verb, "group": a.group, "resource": a.resource, "subresource": a.subresource,
                         "namespace": a.namespace, "name": a.name}
                review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                          "spec": {"user": user, "groups": groups, "resourceAttributes": attrs}}
                body = api.request_json("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=review)
                if not body["status"].get("allowed"):
                    denied.append(a)
            if not denied or time.monotonic() > deadline:
                break
            access = denied
            time.sleep(0.5)
    assert [str(a) for a in denied] == []


def test_wasmsched_runs_with_the_service_accounts_own_token(
        dev_cluster: DevCluster, applied_rbac: None, tmp_path: Path, nodenumber_wasm: Path, namespace: str) -> None:
    """deploy/'s ServiceAccount, with only the RBAC deploy/ grants, schedules with the second-scheduler
    config (leader election on its own lease, events, the wasm plugin): a missing rule fails it."""
    with dev_cluster.kube_api() as api:
        tok = api.request_json("POST", f"/api/v1/namespaces/{SA_NAMESPACE}/serviceaccounts/{SA_NAME}/token",
                               body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                     "spec": {"expirationSeconds": 3600}})
    kubeconfig = tmp_path / "sa.kubeconfig"
    write_kubeconfig(kubeconfig, dev_cluster.server, dev_cluster.ca_file, tok["status"]["token"], user=SA_NAME)
    cm = next(d for d in documents("config-second-scheduler.yaml") if d["kind"] == "ConfigMap")
    text = next(iter(cm["data"].values()))
    # The image's plugin path, here the example built in the tree.
    config = tmp_path / "config.yaml"
    config.write_text(text.replace(_image_wasm_path(), str(nodenumber_wasm)))
    admin = kube_api(dev_cluster.kubeconfig)
    node = f"sa-node-{namespace[-6:]}"
    create_node(admin, node_json(node))
    proc = SchedulerProcess(tmp_path, kubeconfig, config)
    try:
        for i in range(3):
            create_pod(admin, namespace, pod_json(f"p{i}", "wasmsched"))
        bound = wait_bound(admin, namespace, 3, timeout=60)
        assert set(bound.values()) == {node}
        wait_for("Scheduled events written with the SA's token", lambda: len(
            [e for e in events(admin, namespace) if e["reason"] == "Scheduled"]) == 3 or None)
        lease = admin.request_json("GET", f"/apis/coordination.k8s.io/v1/namespaces/{SA_NAMESPACE}/leases/wasmsched")
        assert lease["spec"]["holderIdentity"], lease
    finally:
        code = proc.stop()
        admin.request("DELETE", f"/api/v1/nodes/{node}")
        admin.close()
    log = proc.log()
    assert code == 0, log
    assert "forbidden" not in log.lower(), log
    assert "Traceback" not in log
