"""The process's metrics on `run`'s /metrics (metrics/runtime.py): process_*, python_gc_*, and the heap and
thread gauges a soak reads to tell a leak from the allocator's free memory."""

from __future__ import annotations

import ctypes
import threading

from prometheus_client import CollectorRegistry, generate_latest

from wasmsched.metrics.metrics import SchedulerMetrics
from wasmsched.metrics.runtime import HeapCollector, os_threads
from wasmsched.util.heap import malloc_in_use


def _value(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in the exposition")


def _scrape() -> str:
    r = CollectorRegistry()
    r.register(HeapCollector())
    return generate_latest(r).decode()


def test_run_serves_the_process_metrics_a_kubernetes_component_serves() -> None:
    m = SchedulerMetrics()
    assert "process_resident_memory_bytes" not in m.render().decode()  # simulate's scheduler: none
    m.watch_process()
    text = m.render().decode()
    for name in ("process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds",
                 "process_start_time_seconds", "wasmsched_malloc_in_use_bytes", "wasmsched_python_allocated_blocks",
                 "wasmsched_threads"):
        assert _value(text, name) > 0, name
    assert "python_gc_objects_collected_total" in text and "python_info" in text
    assert "# HELP wasmsched_malloc_in_use_bytes [ALPHA] " in text


def test_malloc_in_use_follows_live_c_heap_bytes_not_rss() -> None:
    before = malloc_in_use()
    assert before is not None and before > 0
    buf = ctypes.create_string_buffer(64 << 20)  # malloc'd: 64 MiB more live bytes
    held = malloc_in_use()
    assert held is not None and held - before >= 60 << 20
    assert _value(_scrape(), "wasmsched_malloc_in_use_bytes") - before >= 60 << 20
    del buf
    after = malloc_in_use()
    assert after is not None and after - before < 8 << 20


def test_python_blocks_and_threads_are_read_when_scraped() -> None:
    blocks = _value(_scrape(), "wasmsched_python_allocated_blocks")
    objs = [object() for _ in range(200_000)]
    assert _value(_scrape(), "wasmsched_python_allocated_blocks") - blocks >= 190_000
    del objs
    threads = os_threads()
    stop = threading.Event()
    extra = [threading.Thread(target=stop.wait, daemon=True) for _ in range(3)]
    for t in extra:
        t.start()
    try:
        assert _value(_scrape(), "wasmsched_threads") >= threads + 3
    finally:
        stop.set()
        for t in extra:
            t.join()
