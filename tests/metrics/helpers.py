"""Reading a SchedulerMetrics the way Prometheus does: through its text exposition."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from wasmsched.metrics.metrics import SchedulerMetrics


@dataclass
class Exposition:
    """The samples of one scrape, by sample name and labels."""

    samples: dict[tuple[str, frozenset[tuple[str, str]]], float]
    types: dict[str, str]
    helps: dict[str, str]

    def value(self, name: str, **labels: str) -> float | None:
        return self.samples.get((name, frozenset(labels.items())))

    def matching(self, name: str, **labels: str) -> dict[frozenset[tuple[str, str]], float]:
        """The samples named `name` whose labels include `labels`."""
        want = set(labels.items())
        return {ls: v for (n, ls), v in self.samples.items() if n == name and want <= ls}


def scrape(m: SchedulerMetrics) -> Exposition:
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    types: dict[str, str] = {}
    helps: dict[str, str] = {}
    for family in text_string_to_metric_families(m.render().decode()):
        types[family.name] = family.type
        helps[family.name] = family.documentation
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return Exposition(samples, types, helps)
