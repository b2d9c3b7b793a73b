"""Scheduler.run: the real-time loop (kube's Run) schedules pods as they come, retries an
unschedulable pod when a cluster event may help it, and ends when asked."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from wasmsched.config import config_from_dict
from wasmsched.embedded.memory import KIND_POD, MemoryCluster
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler.eventhandlers import add_all_event_handlers
from wasmsched.scheduler.factory import new_scheduler
from wasmsched.scheduler.scheduler import Scheduler
from wasmsched.testing.builders import make_node, make_pod

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    # Short backoffs keep the retry of the unschedulable pod quick; the loop must still wake for it.
    "podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 1,
}
# Bounds for waiting on the background loop: generous, and only reached when the behaviour is broken.
WAIT_SECONDS = 20.0


def wait_until(cond: Callable[[], bool]) -> bool:
    end = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


class Running:
    def __init__(self) -> None:
        self.cluster = MemoryCluster()
        self.sched: Scheduler = new_scheduler(config_from_dict(CONFIG), in_tree_registry(), self.cluster,
                                              self.cluster, time.monotonic, binding_workers=2)
        add_all_event_handlers(self.sched, self.cluster)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.sched.run, args=(self.stop,), daemon=True)

    def node_of(self, name: str) -> str:
        pod = self.cluster.get(KIND_POD, f"default/{name}")
        return pod.spec.nodeName if pod is not None else ""


@pytest.fixture
def running() -> Iterator[Running]:
    r = Running()
    r.thread.start()
    try:
        yield r
    finally:
        r.stop.set()
        r.thread.join(WAIT_SECONDS)
        r.sched.close()


def test_pods_added_while_running_are_scheduled(running: Running) -> None:
    running.cluster.create(make_node("n1").res({"cpu": "2", "memory": "4Gi", "pods": "110"}).obj())
    for i in range(3):
        running.cluster.create(make_pod(f"p{i}").uid(f"p{i}").req(cpu="500m").obj())
    assert wait_until(lambda: all(running.node_of(f"p{i}") == "n1" for i in range(3)))


def test_an_unschedulable_pod_is_retried_when_a_node_that_fits_is_added(running: Running) -> None:
    running.cluster.create(make_node("small").res({"cpu": "1", "memory": "4Gi", "pods": "110"}).obj())
    running.cluster.create(make_pod("big").uid("big").req(cpu="3").obj())
    assert wait_until(lambda: running.sched.records.get("default/big") is not None
                      and running.sched.records["default/big"].reason == "Unschedulable")
    assert running.node_of("big") == ""
    running.cluster.create(make_node("large").res({"cpu": "4", "memory": "4Gi", "pods": "110"}).obj())
    assert wait_until(lambda: running.node_of("big") == "large")


def test_setting_stop_ends_the_loop(running: Running) -> None:
    running.stop.set()
    running.thread.join(WAIT_SECONDS)
    assert not running.thread.is_alive()


def test_closing_the_queue_ends_the_loop(running: Running) -> None:
    running.sched.queue.close()
    running.thread.join(WAIT_SECONDS)
    assert not running.thread.is_alive()
