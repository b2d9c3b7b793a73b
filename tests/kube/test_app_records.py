"""`run` drops a pod's record (attempts, last message) when the pod is deleted: kept, they grew by one
per pod ever scheduled (bench/soak_cluster.py found it). No API server: the pod informer's handlers are
fed directly."""

from __future__ import annotations

from wasmsched.config import config_from_dict
from wasmsched.kube.api import ClientConnection, KubeApi, load_configuration
from wasmsched.kube.app import SchedulerApp
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler.records import PodRecords
from wasmsched.testing.builders import make_pod


def test_records_forget_a_pod() -> None:
    records = PodRecords()
    pod = make_pod("a", namespace="ns").obj()
    records.of(pod).attempts += 1
    records.forget(pod)
    records.forget(pod)  # twice: nothing to drop
    assert "ns/a" not in records and len(records) == 0


def test_run_drops_a_deleted_pods_record() -> None:
    cfg = config_from_dict({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                            "profiles": [{"schedulerName": "default-scheduler"}]})
    api = KubeApi(load_configuration(master="https://127.0.0.1:1"), ClientConnection(qps=0))
    app = SchedulerApp(cfg, in_tree_registry(), api)
    try:
        pod = make_pod("p", namespace="ns").uid("u1").node("n1").obj()
        informer = app.informers.informer("Pod")
        informer._apply("ADDED", pod)
        app.scheduler.records.of(pod).attempts = 1
        informer._apply("DELETED", pod)
        assert len(app.scheduler.records) == 0
    finally:
        api.close()
        app.events.api.close()
