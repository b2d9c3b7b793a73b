"""pkg/apis/scheduling/validation: ValidatePriorityClass, and the Priority admission plugin's rule
that at most one PriorityClass is the global default."""

from __future__ import annotations

from typing import Any

from wasmsched.api.validation.core import validate_preemption_policy
from wasmsched.api.validation.field import ErrorList, forbidden
from wasmsched.api.validation.meta import validate_object_meta
from wasmsched.api.validation.util import name_is_dns_subdomain

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
# scheduling.SystemPriorityClasses(): name -> (value, globalDefault)
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": (SYSTEM_CRITICAL_PRIORITY + 1000, False),
    "system-cluster-critical": (SYSTEM_CRITICAL_PRIORITY, False),
}
SYSTEM_PRIORITY_CLASS_DESCRIPTIONS = {
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, but can be moved to "
                               "another node if necessary.",
}


def _is_known_system_priority_class(name: str, value: int, global_default: bool) -> str | None:
    """IsKnownSystemPriorityClass: None when it is one, else the reason."""
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if known[0] != value:
        return f"value of {name} PriorityClass must be {known[0]}"
    if known[1] != global_default:
        return f"globalDefault of {name} PriorityClass must be {'true' if known[1] else 'false'}"
    return None


def validate_priority_class(pc: Any) -> ErrorList:
    """ValidatePriorityClass."""
    errs = validate_object_meta(pc.metadata, False, name_is_dns_subdomain)
    name = pc.metadata.name
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        reason = _is_known_system_priority_class(name, pc.value, pc.globalDefault)
        if reason is not None:
            errs.append(
                forbidden(
                    "metadata.name",
                    f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system "
                    f"use only. error: {reason}",
                )
            )
    elif pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            forbidden("value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}")
        )
    if pc.HasField("preemptionPolicy"):
        errs.extend(validate_preemption_policy(pc.preemptionPolicy, "preemptionPolicy"))
    return errs


def global_default_conflict(existing_default: str, name: str) -> str:
    """The Priority admission plugin's refusal of a second global default (admission.NewForbidden)."""
    return (
        f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: PriorityClass {existing_default} is already '
        "marked as default. Only one default can exist"
    )
