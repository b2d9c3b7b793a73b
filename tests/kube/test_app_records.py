"""`run` drops a pod's record (attempts, last message) when the pod is deleted: kept, they grew by one
per pod ever scheduled (bench/soak_cluster.py found it). No API server: the pod informer's handlers are
fed directly. And the scheduling loop's start and stop, which may come on two threads at once."""

from __future__ import annotations

import threading
import time

import pytest

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


def _app() -> tuple[SchedulerApp, KubeApi]:
    cfg = config_from_dict({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                            "profiles": [{"schedulerName": "default-scheduler"}]})
    api = KubeApi(load_configuration(master="https://127.0.0.1:1"), ClientConnection(qps=0))
    return SchedulerApp(cfg, in_tree_registry(), api), api


def _loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "schedule-one"]


def test_a_sigterm_while_the_loop_thread_starts_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The elector's thread wins the lease (start_scheduling) as SIGTERM's handler stops scheduling: the stop
    must not join a thread that is not started yet (it raised, and `run` exited 1 with a traceback)."""
    app, api = _app()
    starting = threading.Event()
    real_start = threading.Thread.start

    def slow_start(thread: threading.Thread) -> None:
        if thread.name == "schedule-one":
            starting.set()
            time.sleep(0.3)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", slow_start)
    errors: list[BaseException] = []

    def lead() -> None:
        try:
            app.start_scheduling()
        except BaseException as e:  # noqa: BLE001 - the test reports whatever the elector's thread met
            errors.append(e)

    elector = threading.Thread(target=lead)
    try:
        real_start(elector)
        assert starting.wait(5)
        app.stop_scheduling()
        elector.join(5)
        assert errors == []
        assert _loop_threads() == []
        app.start_scheduling()  # a start after the stop starts nothing
        assert _loop_threads() == []
    finally:
        app.shutdown()
        api.close()
