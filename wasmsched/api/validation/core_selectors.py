"""pkg/apis/core/validation for the core kinds that select pods, Service and ReplicationController,
as far as a scheduler relies on them: metadata and the selectors DefaultSelector reads.

Not validated: a Service's ports, IPs and type, and an RC's pod template spec and annotations.
"""

from __future__ import annotations

from typing import Any

from wasmsched.api.labels import selector_from_set
from wasmsched.api.validation.apps import validate_template_labels
from wasmsched.api.validation.field import ErrorList, required
from wasmsched.api.validation.meta import validate_labels, validate_nonnegative_field, validate_object_meta
from wasmsched.api.validation.util import name_is_dns_label, name_is_dns_subdomain


def validate_service(svc: Any) -> ErrorList:
    """ValidateServiceCreate's metadata and selector. Names are DNS-1123 labels: RelaxedServiceNameValidation
    is GA and locked on in 1.37 (ValidateServiceName's DNS-1035 rule is for older Services' updates)."""
    errs = validate_object_meta(svc.metadata, True, name_is_dns_label)
    if svc.spec.selector:
        errs.extend(validate_labels(svc.spec.selector, "spec.selector"))
    return errs


def validate_replication_controller(rc: Any) -> ErrorList:
    """ValidateReplicationController (names are DNS subdomains), after defaulting: the selector and
    replicas are set from the template and to 1 when absent (see api/defaulting)."""
    errs = validate_object_meta(rc.metadata, True, name_is_dns_subdomain)
    spec = rc.spec
    errs.extend(validate_nonnegative_field(spec.minReadySeconds, "spec.minReadySeconds"))
    # ValidateNonEmptySelector: the map's selector is not validated itself; the template's labels are,
    # and they must match it.
    selector = selector_from_set(spec.selector)
    if selector.empty():
        errs.append(required("spec.selector"))
    if not spec.HasField("replicas"):
        errs.append(required("spec.replicas"))
    else:
        errs.extend(validate_nonnegative_field(spec.replicas, "spec.replicas"))
    if not spec.HasField("template"):
        errs.append(required("spec.template"))
    else:
        errs.extend(validate_template_labels(selector.empty(), selector.matches, spec.template.metadata.labels))
    return errs
