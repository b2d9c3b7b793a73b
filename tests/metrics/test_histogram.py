"""wasmsched.metrics.histogram against prometheus_client's Histogram: the same observations give the same
exposition, sample for sample."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import prometheus_client
import pytest
from prometheus_client import CollectorRegistry, generate_latest

from wasmsched.metrics.histogram import Histogram
from wasmsched.metrics.metrics import exponential_buckets

BUCKETS = exponential_buckets(0.0001, 2, 12)
# On the bounds, between them, below the first and above the last.
VALUES = [0.0, 0.0001, 0.00010001, 0.0002, 0.05, 0.1024, 0.2048, 0.21, 3.0, 1e9, 0.0003]


def _exposition(cls: type, labelnames: tuple[str, ...], observations: Sequence[tuple[tuple[str, ...], float]]) -> bytes:
    registry = CollectorRegistry()
    h = cls("duration_seconds", "[STABLE] How long.", labelnames, subsystem="scheduler", registry=registry,
            buckets=BUCKETS)
    for labels, v in observations:
        (h.labels(*labels) if labels else h).observe(v)
    text = generate_latest(registry)
    return b"\n".join(sorted(line for line in text.splitlines() if b"_created" not in line))


@pytest.mark.parametrize("labelnames", [(), ("extension_point", "status")])
def test_same_exposition_as_prometheus_client(labelnames: tuple[str, ...]) -> None:
    keys: list[tuple[str, ...]] = [()] if not labelnames else [("Filter", "Success"), ("Bind", "Error")]
    observations = [(k, v) for k in keys for v in VALUES[: 6 + len(k)]]
    assert _exposition(Histogram, labelnames, observations) == _exposition(
        prometheus_client.Histogram, labelnames, observations)


def test_an_unlabelled_histogram_is_exposed_before_any_observation() -> None:
    assert _exposition(Histogram, (), []) == _exposition(prometheus_client.Histogram, (), [])
    assert b'scheduler_duration_seconds_bucket{le="+Inf"} 0.0' in _exposition(Histogram, (), [])


def test_concurrent_observations_are_all_counted() -> None:
    registry = CollectorRegistry()
    h = Histogram("x", "x", ("a",), registry=registry, buckets=[1.0, 2.0])

    def work() -> None:
        for _ in range(20000):
            h.labels("q").observe(1.5)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cumulative, total = h.labels("q").snapshot()
    assert cumulative == [0, 80000, 80000]
    assert total == 1.5 * 80000


def test_wrong_label_count_is_an_error() -> None:
    h = Histogram("x", "x", ("a", "b"), registry=CollectorRegistry(), buckets=[1.0])
    with pytest.raises(ValueError, match="2 label values expected"):
        h.labels("only-one")
