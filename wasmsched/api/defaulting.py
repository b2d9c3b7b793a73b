"""The API server's defaulting (SetDefaults_*) for the fields of workload controllers that their
validation and the scheduler read; applied by the manifest loader before validation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def default_replication_controller(rc: Any) -> None:
    """core/v1 SetDefaults_ReplicationController, plus the declarative `replicas` default of 1."""
    if rc.spec.HasField("template"):
        labels = rc.spec.template.metadata.labels
        # kube tests `labels != nil`; a decoded empty map is nil, as here
        if labels:
            if not rc.spec.selector:
                rc.spec.selector.update(labels)
            if not rc.metadata.labels:
                rc.metadata.labels.update(labels)
    if not rc.spec.HasField("replicas"):
        rc.spec.replicas = 1


def default_replicas(obj: Any) -> None:
    """apps/v1 SetDefaults_ReplicaSet / SetDefaults_StatefulSet: `replicas` is 1 when absent."""
    if not obj.spec.HasField("replicas"):
        obj.spec.replicas = 1


# kind -> defaulting function, for the kinds that have defaults wasmsched relies on.
DEFAULTERS: dict[str, Callable[[Any], None]] = {
    "ReplicationController": default_replication_controller,
    "ReplicaSet": default_replicas,
    "StatefulSet": default_replicas,
}
