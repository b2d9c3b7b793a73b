"""pkg/apis/policy/validation: ValidatePodDisruptionBudget, with kube's paths and messages."""

from __future__ import annotations

from typing import Any

from wasmsched.api.validation.field import ErrorList, GoStruct, child, invalid, not_supported
from wasmsched.api.validation.meta import (
    label_selector_value,
    validate_label_selector,
    validate_nonnegative_field,
    validate_object_meta,
)
from wasmsched.api.validation.util import is_valid_percent, validate_path_segment_name

_UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")  # sorted


def _int_or_string(v: Any) -> Any:
    """An IntOrString as its JSON value."""
    return v.strVal if v.type == 1 else v.intVal


def _validate_positive_int_or_percent(v: Any, path: str) -> ErrorList:
    """apps ValidatePositiveIntOrPercent."""
    if v.type == 1:
        return [invalid(path, v.strVal, m) for m in is_valid_percent(v.strVal)]
    return validate_nonnegative_field(v.intVal, path)


def _is_not_more_than_100_percent(v: Any, path: str) -> ErrorList:
    """apps IsNotMoreThan100Percent."""
    if v.type != 1 or is_valid_percent(v.strVal):
        return []
    if int(v.strVal[:-1]) <= 100:
        return []
    return [invalid(path, v.strVal, "must not be greater than 100%")]


def validate_pod_disruption_budget(pdb: Any) -> ErrorList:
    """ValidatePodDisruptionBudget, with the generic registry's checks on metadata (a namespace, and
    names that are path segments: kube's PDB strategy adds no name rule of its own)."""
    errs = validate_object_meta(pdb.metadata, True, validate_path_segment_name)
    spec = pdb.spec
    has_min = spec.HasField("minAvailable")
    has_max = spec.HasField("maxUnavailable")
    if has_min and has_max:
        value = GoStruct(
            (
                ("MinAvailable", _int_or_string(spec.minAvailable)),
                ("Selector", label_selector_value(spec.selector) if spec.HasField("selector") else None),
                ("MaxUnavailable", _int_or_string(spec.maxUnavailable)),
                ("UnhealthyPodEvictionPolicy", spec.unhealthyPodEvictionPolicy or None),
            )
        )
        errs.append(invalid("spec", value, "minAvailable and maxUnavailable cannot be both set"))
    if has_min:
        errs.extend(_validate_positive_int_or_percent(spec.minAvailable, "spec.minAvailable"))
        errs.extend(_is_not_more_than_100_percent(spec.minAvailable, "spec.minAvailable"))
    if has_max:
        errs.extend(_validate_positive_int_or_percent(spec.maxUnavailable, "spec.maxUnavailable"))
        errs.extend(_is_not_more_than_100_percent(spec.maxUnavailable, "spec.maxUnavailable"))
    if spec.HasField("selector"):
        errs.extend(validate_label_selector(spec.selector, "spec.selector"))
    if (
        spec.HasField("unhealthyPodEvictionPolicy")
        and spec.unhealthyPodEvictionPolicy not in _UNHEALTHY_POD_EVICTION_POLICIES
    ):
        errs.append(
            not_supported(
                child("spec", "unhealthyPodEvictionPolicy"),
                spec.unhealthyPodEvictionPolicy,
                _UNHEALTHY_POD_EVICTION_POLICIES,
            )
        )
    return errs

