"""util/threadpool.py: ThreadPoolExecutor's submit and shutdown, with threads that start as work waits and
end when there is none (a backlog's threads, and their stacks, do not stay for good)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError, wait

import pytest

from tests.kube.helpers import wait_for
from wasmsched.util.threadpool import ElasticPool, PoolShutDown


def test_results_and_exceptions_come_back_in_futures() -> None:
    pool = ElasticPool(2, 5.0, "t")
    ok = pool.submit(lambda a, b: a + b, 2, 3)
    bad = pool.submit(lambda: 1 // 0)
    assert ok.result(5) == 5
    with pytest.raises(ZeroDivisionError):
        bad.result(5)
    pool.shutdown()


def test_a_thread_starts_for_waiting_work_up_to_the_limit_and_ends_when_idle() -> None:
    pool = ElasticPool(4, 0.2, "t")
    release = threading.Event()
    running = []
    lock = threading.Lock()

    def job() -> None:
        with lock:
            running.append(threading.current_thread().name)
        release.wait(10)

    futures = [pool.submit(job) for _ in range(8)]
    wait_for("four jobs running", lambda: len(running) == 4 or None, timeout=5)
    assert pool.threads() == 4  # the other four wait for a free thread
    release.set()
    wait(futures, 10)
    assert len(running) == 8 and all(f.done() for f in futures)
    wait_for("the idle threads ended", lambda: pool.threads() == 0 or None, timeout=10)
    assert not [t for t in threading.enumerate() if t.name.startswith("t-")]
    # and it starts again
    assert pool.submit(lambda: "again").result(5) == "again"


def test_work_submitted_while_threads_time_out_is_never_stranded() -> None:
    pool = ElasticPool(3, 0.001, "t")  # threads time out all the time
    futures = []
    for i in range(3000):
        futures.append(pool.submit(lambda n=i: n))
        if i % 7 == 0:
            time.sleep(0.0005)
    done, not_done = wait(futures, 30)
    assert not not_done and sorted(f.result() for f in done) == list(range(3000))
    pool.shutdown()


def test_shutdown_refuses_new_work_and_cancels_what_waits_when_asked() -> None:
    pool = ElasticPool(1, 5.0, "t")
    release = threading.Event()
    first = pool.submit(release.wait, 10)
    wait_for("the first job running", lambda: first.running() or None, timeout=5)
    queued = pool.submit(lambda: "never")
    threading.Timer(0.2, release.set).start()
    pool.shutdown(wait=True, cancel_futures=True)
    assert first.result(0) is True
    with pytest.raises(CancelledError):
        queued.result(0)
    with pytest.raises(PoolShutDown):
        pool.submit(lambda: None)
    assert pool.threads() == 0
