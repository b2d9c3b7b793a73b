"""Validation by kind: what the API server runs on create for each kind wasmsched loads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wasmsched.api.validation.apps import validate_replica_set, validate_stateful_set
from wasmsched.api.validation.core import validate_namespace, validate_node, validate_pod_create
from wasmsched.api.validation.core_selectors import validate_replication_controller, validate_service
from wasmsched.api.validation.field import ErrorList, invalid_message
from wasmsched.api.validation.policy import validate_pod_disruption_budget
from wasmsched.api.validation.scheduling import validate_priority_class

# kind -> (qualified kind as apierrors.NewInvalid prints it, validation function)
VALIDATORS: dict[str, tuple[str, Callable[[Any], ErrorList]]] = {
    "Pod": ("Pod", validate_pod_create),
    "Node": ("Node", validate_node),
    "Namespace": ("Namespace", validate_namespace),
    "PriorityClass": ("PriorityClass.scheduling.k8s.io", validate_priority_class),
    "PodDisruptionBudget": ("PodDisruptionBudget.policy", validate_pod_disruption_budget),
    "Service": ("Service", validate_service),
    "ReplicationController": ("ReplicationController", validate_replication_controller),
    "ReplicaSet": ("ReplicaSet.apps", validate_replica_set),
    "StatefulSet": ("StatefulSet.apps", validate_stateful_set),
}


def validate_object(kind: str, obj: Any) -> str | None:
    """The API server's `<Kind> "<name>" is invalid: ...` message for obj, or None when it is valid
    (or of a kind wasmsched does not validate)."""
    entry = VALIDATORS.get(kind)
    if entry is None:
        return None
    qualified, fn = entry
    errs = fn(obj)
    if not errs:
        return None
    return invalid_message(qualified, obj.metadata.name, errs)
