"""deploy/helm/wasmsched: `helm lint`, and `helm template` of each documented values combination (the
chart's defaults, mode only, no leader election, and every file of the chart's examples/) parsed and
checked: the KubeSchedulerConfiguration loads with wasmsched's own loader, each plugin's guestURL and
file arguments point into a volume that holds them, the defaults render what deploy/ holds (rbac.yaml,
the ConfigMaps, deployment.yaml), the RBAC grants what the plugins watch; and every rendered object is
accepted by a real API server (`kubectl apply --dry-run=server`).

Helm and kubectl come from the kube binary cache (`make helm`, `make kube`; tools/kube/build.sh); a
missing one fails the tests, it never skips them."""

from __future__ import annotations

import base64
import functools
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from wasmsched.api.gvr import GroupVersionResource
from wasmsched.config.load import config_from_dict
from wasmsched.devcluster import DevCluster
from wasmsched.devcluster.binaries import bin_dir
from wasmsched.kube.rbac import Access, missing, service_account_grants, watched_access
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.wasm.args import decode_args
from wasmsched.wasm.plugin import register_wasm_plugins

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "wasmsched"
DEPLOY = ROOT / "deploy"
TESTDATA = Path(__file__).resolve().parent / "testdata"
RELEASE, NAMESPACE = "wasmsched", "kube-system"

# The documented combinations: name -> helm template arguments.
COMBOS: dict[str, tuple[str, ...]] = {
    "defaults": (),
    "only-scheduler": ("--set", "mode=only"),
    "no-leader-election": ("--set", "replicas=1", "--set", "leaderElection.enabled=false"),
    "service-monitor": ("--set", "serviceMonitor.enabled=true"),
    **{f"example-{p.stem}": ("-f", str(p)) for p in sorted((CHART / "examples").glob("*.yaml"))},
}



def _tool(name: str, make_target: str) -> Path:
    path = bin_dir() / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"{name} not found in {bin_dir()}: run `make {make_target}` (tools/kube/build.sh {name})",
                    pytrace=False)
    return path


@pytest.fixture(scope="session")
def helm_binary() -> Path:
    return _tool("helm", "helm")


@functools.cache
def _template(helm_binary: Path, args: tuple[str, ...]) -> str:
    proc = subprocess.run([str(helm_binary), "template", RELEASE, str(CHART), "--namespace", NAMESPACE, *args],
                          check=False, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise TemplateError(proc.stderr.strip())
    return proc.stdout


class TemplateError(Exception):
    pass


def render(helm_binary: Path, *args: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(_template(helm_binary, tuple(args))) if d]


def one(objs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(found) == 1, (kind, name, [o["metadata"]["name"] for o in found])
    return found[0]


def scheduler_config(objs: list[dict[str, Any]]) -> dict[str, Any]:
    cm = one(objs, "ConfigMap", f"{RELEASE}-config")
    cfg: dict[str, Any] = yaml.safe_load(cm["data"]["config.yaml"])
    return cfg


def pod_spec(objs: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = one(objs, "Deployment")["spec"]["template"]["spec"]
    return spec


def deploy_documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def strip_labels(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without metadata.labels (the chart adds Helm's standard labels; deploy/ has none)."""
    out = {k: v for k, v in obj.items() if k != "metadata"}
    out["metadata"] = {k: v for k, v in obj["metadata"].items() if k != "labels"}
    return out


# ---- helm lint and the rendered objects ---------------------------------------------------------

@pytest.mark.parametrize("combo", sorted(COMBOS))
def test_helm_lint_is_clean(helm_binary: Path, combo: str) -> None:
    proc = subprocess.run([str(helm_binary), "lint", "--strict", str(CHART), "--namespace", NAMESPACE, *COMBOS[combo]],
                          check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 chart(s) failed" in proc.stdout, proc.stdout


@pytest.mark.parametrize("combo", sorted(COMBOS))
def test_rendered_configuration_loads_and_plugins_are_wasm(helm_binary: Path, combo: str) -> None:
    """The ConfigMap's configuration is accepted by wasmsched's loader (kube-scheduler's defaulting and
    validation), each values plugin is a wasm plugin wasmsched registers beside the in-tree ones, enabled
    at multiPoint with its weight, and its args decode."""
    objs = render(helm_binary, *COMBOS[combo])
    raw = scheduler_config(objs)
    cfg = config_from_dict(raw)
    assert len(cfg.profiles) == 1
    values = _values(combo)
    names = [p["name"] for p in values["plugins"]]
    assert register_wasm_plugins(in_tree_registry(), cfg) == names
    for pc in cfg.profiles[0].plugin_config:
        if pc.name in names:
            # Every key the chart renders is one the decoder knows (an unknown one is only a warning).
            assert decode_args(pc.name, pc.args).warnings == []
    enabled = raw["profiles"][0]["plugins"]["multiPoint"]["enabled"]
    assert enabled == [{"name": p["name"], "weight": p["weight"]} for p in values["plugins"]]


def _values(combo: str) -> dict[str, Any]:
    """The values a combination renders with: the chart's defaults, overlaid by its -f file (the --set
    combinations change no plugin)."""
    values: dict[str, Any] = yaml.safe_load((CHART / "values.yaml").read_text())
    args = COMBOS[combo]
    if args[:1] == ("-f",):
        values.update(yaml.safe_load(Path(args[1]).read_text()))
    return values


@pytest.mark.parametrize("combo", sorted(COMBOS))
def test_scheduler_name_lease_and_replicas_follow_the_mode(helm_binary: Path, combo: str) -> None:
    objs = render(helm_binary, *COMBOS[combo])
    values = _values(combo)
    mode = "only" if combo == "only-scheduler" else values["mode"]
    raw = scheduler_config(objs)
    le = raw["leaderElection"]
    want_name = values.get("schedulerName") or ("default-scheduler" if mode == "only" else "wasmsched")
    assert raw["profiles"][0]["schedulerName"] == want_name
    # mode only takes over kube-scheduler's own Lease, so a kube-scheduler started by mistake waits.
    want_lease = ("kube-system", "kube-scheduler") if mode == "only" else (NAMESPACE, RELEASE)
    assert (le["resourceNamespace"], le["resourceName"], le["resourceLock"]) == (*want_lease, "leases")
    dep = one(objs, "Deployment")
    elect = combo != "no-leader-election" and values.get("leaderElection", {}).get("enabled", True)
    assert le["leaderElect"] is elect
    (c,) = dep["spec"]["template"]["spec"]["containers"]
    assert f"--leader-elect={str(elect).lower()}" in c["args"]
    assert dep["spec"]["replicas"] == (1 if combo == "no-leader-election" else values["replicas"])
    roles = [o for o in objs if o["kind"] == "Role"]
    if elect:
        (role,) = roles
        assert role["metadata"]["namespace"] == want_lease[0]
        assert {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [want_lease[1]],
                "verbs": ["get", "update"]} in role["rules"]
    else:
        assert roles == []


@pytest.mark.parametrize("combo", sorted(COMBOS))
def test_every_guest_file_is_in_a_mounted_volume(helm_binary: Path, combo: str) -> None:
    """A guestURL that is a path, and caFile, registryConfig and verify.publicKey, name a file the pod
    has: under a volume's mountPath, as one of that volume's items (or in the image, for guest.path)."""
    objs = render(helm_binary, *COMBOS[combo])
    spec = pod_spec(objs)
    (c,) = spec["containers"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    assert len(mounts) == len(c["volumeMounts"]), "two mounts at one path"
    values = _values(combo)
    for p, pc in zip(values["plugins"], scheduler_config(objs)["profiles"][0]["pluginConfig"], strict=True):
        args = pc["args"]
        files = [args[k] for k in ("caFile", "registryConfig") if k in args]
        files += [args["verify"]["publicKey"]] if "verify" in args else []
        url = args["guestURL"]
        guest = p["guest"]
        if "oci" in guest:
            assert url == guest["oci"]["url"] and url.startswith("oci://")
            # The pull cache is on the writable cache volume (the root filesystem is read-only).
            env = {e["name"]: e["value"] for e in c["env"]}
            cache = mounts["/var/cache/wasmsched"]
            assert env["WASMSCHED_OCI_CACHE_DIR"].startswith(cache["mountPath"] + "/")
            assert "emptyDir" in volumes[cache["name"]]
            assert args.get("plainHTTP", False) is guest["oci"].get("plainHTTP", False)
            assert len(files) == sum(1 for k in ("ca", "registryConfig", "verify") if k in guest["oci"])
        elif "path" in guest:
            assert url == guest["path"]
            continue
        else:
            files.append(url)
        for f in files:
            path = PurePosixPath(f)
            mount = mounts.get(str(path.parent))
            assert mount is not None, f"{f}: no volume mounted at {path.parent}"
            assert mount.get("readOnly") is True, mount
            vol = volumes[mount["name"]]
            if "image" in vol:
                assert vol["image"]["reference"] == guest["image"]["reference"]
                assert path.name == guest["image"]["path"]
                continue
            source = vol.get("configMap") or vol.get("secret")
            assert source is not None, vol
            assert [i["path"] for i in source["items"]] == [path.name], (f, vol)


def test_defaults_render_deploys_rbac(helm_binary: Path) -> None:
    """With its defaults (release wasmsched in kube-system) the chart's RBAC is deploy/rbac.yaml's, object
    for object (labels aside)."""
    chart = {(o["kind"], o["metadata"]["name"]): strip_labels(o) for o in render(helm_binary)
             if o["apiVersion"].startswith("rbac.") or o["kind"] == "ServiceAccount"}
    plain = {(o["kind"], o["metadata"]["name"]): o for o in deploy_documents("rbac.yaml")}
    assert chart == plain


@pytest.mark.parametrize(("combo", "config"), [("defaults", "config-second-scheduler.yaml"),
                                               ("only-scheduler", "config-only-scheduler.yaml")])
def test_defaults_render_deploys_configuration(helm_binary: Path, combo: str, config: str) -> None:
    (cm,) = deploy_documents(config)
    assert scheduler_config(render(helm_binary, *COMBOS[combo])) == yaml.safe_load(cm["data"]["config.yaml"])


def test_defaults_render_deploys_deployment(helm_binary: Path) -> None:
    """The pod is deploy/deployment.yaml's: the same container (image aside), volumes, security and
    probes; the selector adds Helm's instance label."""
    objs = render(helm_binary)
    chart = pod_spec(objs)
    (plain,) = deploy_documents("deployment.yaml")
    want = plain["spec"]["template"]["spec"]
    selector = one(objs, "Deployment")["spec"]["selector"]["matchLabels"]
    assert selector == {"app.kubernetes.io/name": "wasmsched", "app.kubernetes.io/instance": RELEASE}
    want["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"][
        "labelSelector"]["matchLabels"] = selector
    want["volumes"][0]["configMap"]["name"] = f"{RELEASE}-config"
    for spec in (chart, want):
        for c in spec["containers"]:
            c.pop("image")
    assert chart == want
    assert one(objs, "Deployment")["spec"]["replicas"] == plain["spec"]["replicas"]


def test_watched_resources_are_granted(helm_binary: Path) -> None:
    """The plugins' watch (and rbac.extraWatched) become ClusterRole rules: the ServiceAccount may list and
    watch them cluster-wide, which it may not without them."""
    extra = ("--set-string", "rbac.extraWatched[0].group=", "--set", "rbac.extraWatched[0].resource=configmaps")
    objs = render(helm_binary, "-f", str(CHART / "examples" / "watched-resources.yaml"), *extra)
    args = scheduler_config(objs)["profiles"][0]["pluginConfig"][0]["args"]
    watch = [GroupVersionResource(**w) for w in args["watch"]]
    wanted = [*watched_access(watch), Access("list", "", "configmaps"), Access("watch", "", "configmaps")]
    grants = service_account_grants(NAMESPACE, RELEASE, objs, {})
    assert missing(grants, wanted) == []
    plain = service_account_grants(NAMESPACE, RELEASE, render(helm_binary), {})
    assert missing(plain, wanted) == wanted


def test_configmap_guest_created_by_the_chart(helm_binary: Path, tmp_path: Path) -> None:
    """guest.configMap.binaryData: the chart creates the ConfigMap holding the guest, and mounts it."""
    guest = b"\0asm\1\0\0\0"  # the smallest module; only its bytes matter here
    values = {"plugins": [{"name": "Tiny", "guest": {"configMap": {
        "key": "tiny.wasm", "binaryData": base64.b64encode(guest).decode()}}}]}
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    objs = render(helm_binary, "-f", str(tmp_path / "values.yaml"))
    cm = one(objs, "ConfigMap", f"{RELEASE}-guest-0")
    assert base64.b64decode(cm["binaryData"]["tiny.wasm"]) == guest
    vol = next(v for v in pod_spec(objs)["volumes"]
               if "configMap" in v and v["configMap"]["name"] == cm["metadata"]["name"])
    assert vol["configMap"]["items"] == [{"key": "tiny.wasm", "path": "tiny.wasm"}]


@pytest.mark.parametrize(("args", "error"), [
    (("--set", "leaderElection.enabled=false"), "replicas > 1 needs leaderElection.enabled"),
    (("--set", "mode=third"), "mode"),
    (("--set", "plugins[0].name=X", "--set", "plugins[0].guest.path=/a.wasm",
      "--set", "plugins[0].guest.oci.url=oci://r/x:1"), "guest"),
    (("--set", "plugins[0].name=X", "--set", "plugins[0].guest.oci.url=https://r/x.wasm"), "oci://"),
    (("--set", "plugins[0].failurePolicy=Sometimes"), "failurePolicy"),
    (("--set", "serviceMonitor.enabled=true", "--set", "service.enabled=false"), "service.enabled"),
])
def test_invalid_values_are_refused(helm_binary: Path, args: tuple[str, ...], error: str) -> None:
    with pytest.raises(TemplateError, match=re.escape(error)):
        render(helm_binary, *args)


# ---- against the API server ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def kubectl(dev_cluster: DevCluster) -> Iterator[list[str]]:
    """kubectl of the test's dev cluster, with the ServiceMonitor CRD installed (a cluster running the
    Prometheus Operator has it; testdata/ holds the part of its schema the chart uses)."""
    base = [str(_tool("kubectl", "kube")), "--kubeconfig", str(dev_cluster.kubeconfig)]
    crd = TESTDATA / "servicemonitor-crd.yaml"
    subprocess.run([*base, "apply", "-f", str(crd)], check=True, capture_output=True, timeout=60)
    subprocess.run([*base, "wait", "--for=condition=Established", "-f", str(crd), "--timeout=60s"],
                   check=True, capture_output=True, timeout=90)
    yield base
    subprocess.run([*base, "delete", "-f", str(crd)], check=False, capture_output=True, timeout=60)


@pytest.mark.parametrize("combo", sorted(COMBOS))
def test_server_side_dry_run_accepts_every_object(helm_binary: Path, kubectl: list[str], combo: str) -> None:
    manifest = _template(helm_binary, COMBOS[combo])
    proc = subprocess.run([*kubectl, "apply", "--dry-run=server", "--validate=strict", "-f", "-"], input=manifest,
                          check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # One line per object: each was sent and accepted ("... created (server dry run)").
    kinds = [o["kind"] for o in yaml.safe_load_all(manifest) if o]
    assert proc.stdout.count("(server dry run)") == len(kinds), proc.stdout
