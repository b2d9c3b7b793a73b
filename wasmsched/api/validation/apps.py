"""pkg/apis/apps/validation: ValidateReplicaSet and ValidateStatefulSet, as far as a scheduler relies
on them: metadata, replica counts, and the selector (required, valid, non-empty, matching the pod
template's labels), since DefaultSelector spreads a controller's pods by it.

Not validated: the pod template's spec and annotations, and a StatefulSet's update strategy, pod
management policy and volume claim templates; wasmsched creates no pods from them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from wasmsched.api.labels import SelectorError, compile_optional_label_selector
from wasmsched.api.validation.field import ErrorList, invalid, required
from wasmsched.api.validation.meta import (
    label_selector_value,
    validate_label_selector,
    validate_labels,
    validate_nonnegative_field,
    validate_object_meta,
)
from wasmsched.api.validation.util import is_dns1123_label, name_is_dns_label, name_is_dns_subdomain

_SELECTOR = "spec.selector"


def validate_replica_set(rs: Any) -> ErrorList:
    """ValidateReplicaSet (names are DNS subdomains: ValidateReplicaSetName)."""
    errs = validate_object_meta(rs.metadata, True, name_is_dns_subdomain)
    spec = rs.spec
    errs.extend(validate_nonnegative_field(spec.replicas, "spec.replicas"))
    errs.extend(validate_nonnegative_field(spec.minReadySeconds, "spec.minReadySeconds"))
    # kube's message says "deployment" for ReplicaSets too.
    errs.extend(_validate_selector_and_template(spec, "deployment", "invalid label selector"))
    return errs


def validate_stateful_set(ss: Any) -> ErrorList:
    """ValidateStatefulSet (names are DNS labels: ValidateStatefulSetName)."""
    errs = validate_object_meta(ss.metadata, True, name_is_dns_label)
    spec = ss.spec
    errs.extend(validate_nonnegative_field(spec.replicas, "spec.replicas"))
    errs.extend(validate_nonnegative_field(spec.minReadySeconds, "spec.minReadySeconds"))
    if spec.HasField("ordinals"):
        errs.extend(validate_nonnegative_field(spec.ordinals.start, "spec.ordinals.start"))
    if spec.serviceName:
        errs.extend(invalid("spec.serviceName", spec.serviceName, m) for m in is_dns1123_label(spec.serviceName))
    errs.extend(_validate_selector_and_template(spec, "statefulset", ""))
    return errs


def _validate_selector_and_template(spec: Any, kind_word: str, not_a_selector_detail: str) -> ErrorList:
    """The selector checks of ValidateReplicaSetSpec / ValidateStatefulSetSpec, then the template's
    labels: they must match the selector (a nil selector matches nothing, so it fails here too)."""
    errs: ErrorList = []
    has_selector = spec.HasField("selector")
    if not has_selector:
        errs.append(required(_SELECTOR))
    else:
        errs.extend(validate_label_selector(spec.selector, _SELECTOR))
        if not spec.selector.matchLabels and not spec.selector.matchExpressions:
            errs.append(invalid(_SELECTOR, label_selector_value(spec.selector),
                                f"empty selector is invalid for {kind_word}"))
    try:
        selector = compile_optional_label_selector(spec, "selector")
    except SelectorError:
        errs.append(invalid(_SELECTOR, label_selector_value(spec.selector) if has_selector else None,
                            not_a_selector_detail))
        return errs
    errs.extend(validate_template_labels(selector.empty(), selector.matches, spec.template.metadata.labels))
    return errs


def validate_template_labels(selector_empty: bool, matches: Callable[[Mapping[str, str]], bool],
                             labels: Mapping[str, str]) -> ErrorList:
    """ValidatePodTemplateSpecFor{ReplicaSet,StatefulSet,RC}'s label checks: a non-empty selector must
    match the template's labels, and the labels must be valid (ValidatePodTemplateSpec)."""
    errs: ErrorList = []
    if not selector_empty and not matches(labels):
        errs.append(invalid("spec.template.metadata.labels", dict(sorted(labels.items())) or None,
                            "`selector` does not match template `labels`"))
    errs.extend(validate_labels(labels, "spec.template.labels"))
    return errs
