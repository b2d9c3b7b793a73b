"""The process's own metrics, as every Kubernetes component serves them beside its own (component-base's
legacyregistry registers the process collector and the Go runtime's): process_* (CPU, RSS, open files,
start time) from prometheus-client's ProcessCollector, python_gc_* and python_info from its GC and
platform collectors, and what Go's collector would tell of the heap and threads, read when scraped:

- wasmsched_malloc_in_use_bytes: the C heap's live bytes (util/heap.py), go_memstats_heap_alloc_bytes'
  counterpart for everything not in Python's object allocator (wasmtime, libcurl, protobuf messages'
  buffers, large strings);
- wasmsched_python_allocated_blocks: the blocks Python's object allocator holds (sys.getallocatedblocks);
- wasmsched_threads: the process's OS threads (go_threads).

RSS moves with what the allocators keep free; the two heap gauges do not, so bench/soak_cluster.py reads
them to tell a leak from fragmentation.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, GCCollector, PlatformCollector, ProcessCollector
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from wasmsched.util.heap import malloc_in_use

MALLOC_IN_USE_HELP = ("[ALPHA] Bytes of the C heap allocated and not yet freed (glibc mallinfo2: uordblks + "
                      "hblkhd; jemalloc: stats.allocated), as go_memstats_heap_alloc_bytes is for a Go component.")
PYTHON_BLOCKS_HELP = "[ALPHA] Memory blocks currently allocated by Python's object allocator (sys.getallocatedblocks)."
THREADS_HELP = "[ALPHA] Number of OS threads of the process, as go_threads is for a Go component."


def os_threads() -> int:
    """The process's threads as the kernel counts them (/proc/self/status), or Python's where there is no /proc."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return threading.active_count()


class HeapCollector(Collector):
    def collect(self) -> Iterable[Metric]:
        in_use = malloc_in_use()
        if in_use is not None:
            yield GaugeMetricFamily("wasmsched_malloc_in_use_bytes", MALLOC_IN_USE_HELP, value=in_use)
        yield GaugeMetricFamily("wasmsched_python_allocated_blocks", PYTHON_BLOCKS_HELP,
                                value=sys.getallocatedblocks())
        yield GaugeMetricFamily("wasmsched_threads", THREADS_HELP, value=os_threads())


def register_process_collectors(registry: CollectorRegistry) -> None:
    """Adds the process's metrics to a scheduler's registry (`run`'s /metrics: one scheduler per process)."""
    ProcessCollector(registry=registry)
    GCCollector(registry=registry)
    PlatformCollector(registry=registry)
    registry.register(HeapCollector())
