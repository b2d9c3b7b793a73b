"""`run` with a plugin that declares watched resources (docs/abi.md §14.2), against the real API server:
the NodeResourceTopology CRD (installed with apiextensions) and namespaces are listed and watched by a
dynamic informer each, reach the plugin through the Handle as JSON, and their changes are cluster events
`<resource>.<version>.<group>` that requeue the pods the plugin rejected. A resource the scheduler may not
list, or that the server does not serve, fails start-up with one line naming it (exit 2)."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.watch_helpers import NAMESPACES, NRT, NRT_CRD, PLUGIN, TopologyMatch, nrt
from wasmsched.api.errors import ApiError, is_already_exists
from wasmsched.api.gvr import GroupVersionResource
from wasmsched.cli import run as run_cli
from wasmsched.cli.main import main
from wasmsched.config import config_from_dict
from wasmsched.devcluster import DevCluster
from wasmsched.devcluster.kubeconfig import write_kubeconfig
from wasmsched.framework.events import ActionType, ClusterEvent
from wasmsched.kube.api import KubeApi
from wasmsched.kube.app import SchedulerApp
from wasmsched.kube.informer import WatchStartupError
from wasmsched.plugins.registry import Registry, in_tree_registry

from .helpers import wait_for
from .run_helpers import create_node, create_pod, get_pod, node_json, pod_json, unique

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture(scope="module")
def nrt_crd(dev_cluster: DevCluster) -> None:
    """The NodeResourceTopology CRD, installed once and served (Established) before the tests use it."""
    with dev_cluster.kube_api() as api:
        try:
            api.request_json("POST", CRD_PATH, body=NRT_CRD)
        except ApiError as e:
            if not is_already_exists(e):
                raise

        def served() -> bool | None:
            try:
                api.request_json("GET", NRT.path())
                return True
            except ApiError:
                return None  # 404 until the CRD is established, then 503 while its storage starts

        wait_for("the CRD to be served", served, timeout=30)


def registry(watch: tuple[GroupVersionResource, ...] = (NRT, NAMESPACES)) -> Registry:
    reg = in_tree_registry()
    reg.register(PLUGIN, lambda args, handle: TopologyMatch(handle, watch))
    return reg


def config(scheduler_name: str) -> Any:
    return config_from_dict({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler_name, "plugins": {"multiPoint": {"enabled": [{"name": PLUGIN}]}}}],
    })


def create_nrt(api: KubeApi, obj: dict[str, Any]) -> dict[str, Any]:
    return api.request_json("POST", NRT.path(), body=obj)  # type: ignore[no-any-return]


@pytest.fixture
def app(dev_cluster: DevCluster, nrt_crd: None) -> Iterator[SchedulerApp]:
    api = dev_cluster.kube_api()
    app = SchedulerApp(config(unique("watching")), registry(), api)
    try:
        yield app
    finally:
        app.shutdown()
        api.close()


def test_watched_resources_are_listed_watched_and_requeue_pods(dev_cluster: DevCluster, namespace: str,
                                                                app: SchedulerApp) -> None:
    node = unique("nrt-node")
    admin = dev_cluster.kube_api()
    try:
        create_node(admin, node_json(node))
        create_nrt(admin, nrt(node, False, zone="a"))
        assert app.start_informers(sync_timeout=60)
        store = app.scheduler.watched
        # Listed before the caches are synced: the CRD's object as JSON, and the namespaces.
        raw = store.get(NRT, "", node)
        assert raw is not None
        obj = json.loads(raw)
        assert obj["apiVersion"] == "topology.node.k8s.io/v1alpha2" and obj["kind"] == "NodeResourceTopology"
        assert obj["ok"] is False and obj["metadata"]["resourceVersion"]
        assert [json.loads(b)["metadata"]["name"] for b in store.list(NRT, label_selector="zone=a")] == [node]
        (ns,) = [json.loads(b) for b in store.list(NAMESPACES) if json.loads(b)["metadata"]["name"] == namespace]
        assert ns["kind"] == "Namespace" and ns["apiVersion"] == "v1"

        seen: list[tuple[ClusterEvent, Any, Any]] = []
        queue = app.scheduler.queue
        real = queue.move_all_to_active_or_backoff_queue

        def recording(event: ClusterEvent, old: Any = None, new: Any = None, *rest: Any) -> int:
            if event.resource.endswith((".topology.node.k8s.io", "namespaces.v1.")):
                seen.append((event, old, new))
            return real(event, old, new, *rest)

        queue.move_all_to_active_or_backoff_queue = recording  # type: ignore[method-assign,assignment]
        app.start_scheduling()
        pod = unique("p")
        create_pod(admin, namespace, pod_json(pod, app.cfg.profiles[0].scheduler_name))

        def rejected() -> bool | None:
            p = get_pod(admin, namespace, pod)
            conds = (p or {}).get("status", {}).get("conditions", [])
            return True if any(c["type"] == "PodScheduled" and c["status"] == "False" for c in conds) else None

        wait_for("the pod rejected by the plugin", rejected)
        # The watch delivers an update as a cluster event with both objects; the pod is queued again.
        current = json.loads(store.get(NRT, "", node) or b"{}")
        admin.request_json("PUT", NRT.path(name=node), body={**current, "ok": True})
        wait_for("the pod bound", lambda: (get_pod(admin, namespace, pod) or {}).get("spec", {}).get("nodeName"))
        assert (get_pod(admin, namespace, pod) or {})["spec"]["nodeName"] == node
        update = ClusterEvent("noderesourcetopologies.v1alpha2.topology.node.k8s.io", ActionType.UPDATE)
        (_ev, old, new), *_ = [s for s in seen if s[0] == update]
        assert old["ok"] is False and new["ok"] is True and new["metadata"]["name"] == node

        other = unique("ns")
        dev_cluster.create_namespace(other)
        try:
            wait_for("the namespace's Add event",
                     lambda: any(e == ClusterEvent("namespaces.v1.", ActionType.ADD) and n["metadata"]["name"] == other
                                 for e, _, n in seen) or None)
        finally:
            dev_cluster.delete_namespace(other)
        admin.request("DELETE", NRT.path(name=node))
        wait_for("the Delete event", lambda: any(
            e == ClusterEvent(NRT.event_resource, ActionType.DELETE) and o["metadata"]["name"] == node and n is None
            for e, o, n in seen) or None)
        assert store.get(NRT, "", node) is None
    finally:
        for path in (NRT.path(name=node), f"/api/v1/nodes/{node}"):
            with contextlib.suppress(ApiError):
                admin.request("DELETE", path)
        admin.close()


def test_a_resource_the_scheduler_may_not_list_fails_start_up_naming_it(dev_cluster: DevCluster,
                                                                         nrt_crd: None) -> None:
    api = dev_cluster.kube_api(dev_cluster.restricted_token)
    app = SchedulerApp(config(unique("restricted")), registry(), api)
    try:
        with pytest.raises(WatchStartupError) as e:
            app.start_informers(sync_timeout=60)
    finally:
        app.shutdown()
        api.close()
    assert str(e.value) == (
        'watch noderesourcetopologies.v1alpha2.topology.node.k8s.io: forbidden: User "restricted" cannot list '
        'resource "noderesourcetopologies" in API group "topology.node.k8s.io" at the cluster scope; grant list '
        "and watch on it (docs/deploy.md)")


def test_a_resource_the_server_does_not_serve_fails_start_up(dev_cluster: DevCluster) -> None:
    widgets = GroupVersionResource("example.com", "v1", "widgets")
    api = dev_cluster.kube_api()
    app = SchedulerApp(config(unique("missing")), registry((widgets,)), api)
    try:
        with pytest.raises(WatchStartupError) as e:
            app.start_informers(sync_timeout=60)
    finally:
        app.shutdown()
        api.close()
    assert str(e.value).startswith("watch widgets.v1.example.com: not found: ")
    assert "(is its CustomResourceDefinition installed?)" in str(e.value)


def test_run_exits_2_with_one_line(dev_cluster: DevCluster, nrt_crd: None, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = tmp_path / "restricted.kubeconfig"
    write_kubeconfig(kubeconfig, dev_cluster.server, dev_cluster.ca_file, dev_cluster.restricted_token,
                     user="restricted")
    cfg = tmp_path / "scheduler.yaml"
    cfg.write_text(yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                   "kind": "KubeSchedulerConfiguration",
                                   "profiles": [{"schedulerName": unique("cli"),
                                                 "plugins": {"multiPoint": {"enabled": [{"name": PLUGIN}]}}}]}))
    monkeypatch.setattr(run_cli, "in_tree_registry", registry)
    # In this process `run` would move pytest's own threads to SCHED_BATCH, and the processes they start after.
    monkeypatch.setattr(run_cli, "use_batch_policy", lambda: "unchanged (in a test process)")
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    assert threading.current_thread() is threading.main_thread()
    try:
        code = main(["run", "--config", str(cfg), "--kubeconfig", str(kubeconfig), "--leader-elect=false",
                     "--secure-port", "0"])
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert lines == ['error: watch noderesourcetopologies.v1alpha2.topology.node.k8s.io: forbidden: User '
                     '"restricted" cannot list resource "noderesourcetopologies" in API group "topology.node.k8s.io" '
                     "at the cluster scope; grant list and watch on it (docs/deploy.md)"], err
    assert "Traceback" not in err

