"""apimachinery's ObjectMeta validation (api/validation/objectmeta.go) and the metav1 validation of
labels and label selectors (apis/meta/v1/validation), with kube's paths and messages."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from wasmsched.api.validation.field import (
    ErrorList,
    child,
    forbidden,
    index,
    invalid,
    required,
    too_long,
)
from wasmsched.api.validation.util import (
    is_qualified_name,
    is_valid_label_value,
    label_value_errors,
    name_is_dns_label,
    qualified_name_errors,
)

NameFunc = Callable[[str, bool], list[str]]

IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)  # 256 kB
# metav1.FinalizerOrphanDependents, FinalizerDeleteDependents and core's FinalizerKubernetes.
_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})

LABEL_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_label_name(name: str, path: str) -> ErrorList:
    """metav1validation.ValidateLabelName."""
    msgs = qualified_name_errors(name)
    return [invalid(path, name, m) for m in msgs] if msgs else []


def validate_labels(labels: Mapping[str, str], path: str) -> ErrorList:
    """metav1validation.ValidateLabels: keys are qualified names, values label values; the path is the
    map's own (kube reports `metadata.labels: Invalid value: "a b"`, not the key)."""
    errs: ErrorList = []
    # key-then-lookup: iterating a proto map's items() goes through a slow Python view
    for k in labels:
        v = labels[k]
        if msgs := qualified_name_errors(k):
            errs.extend(invalid(path, k, m) for m in msgs)
        if msgs := label_value_errors(v):
            errs.extend(invalid(path, v, m) for m in msgs)
    return errs


def validate_annotations(annotations: Mapping[str, str], path: str) -> ErrorList:
    """apimachinery ValidateAnnotations: keys are qualified names in any case; 256 KiB in total."""
    errs: ErrorList = []
    total = 0
    for k, v in annotations.items():
        if msgs := is_qualified_name(k.lower()):
            errs.extend(invalid(path, k, m) for m in msgs)
        total += len(k.encode()) + len(v.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


def validate_nonnegative_field(value: int, path: str) -> ErrorList:
    """apimachinery ValidateNonnegativeField."""
    return [invalid(path, value, IS_NEGATIVE_ERROR_MSG)] if value < 0 else []


def _validate_finalizers(finalizers: Any, path: str) -> ErrorList:
    """ValidateFinalizers plus core's validateKubeFinalizerName."""
    errs: ErrorList = []
    for i, name in enumerate(finalizers):
        for m in is_qualified_name(name):
            errs.append(invalid(path, name, m))
        if "/" not in name and name not in _STANDARD_FINALIZERS:
            errs.append(
                invalid(index(path, i), name, "name is neither a standard finalizer name nor is it fully qualified")
            )
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(invalid(path, list(finalizers), "finalizer orphan and foregroundDeletion cannot be both set"))
    return errs


def _validate_owner_references(refs: Any, path: str) -> ErrorList:
    errs: ErrorList = []
    controller = ""
    for i, ref in enumerate(refs):
        p = index(path, i)
        if not ref.apiVersion:
            errs.append(required(child(p, "apiVersion"), "must not be empty"))
        if not ref.kind:
            errs.append(required(child(p, "kind"), "must not be empty"))
        if not ref.name:
            errs.append(required(child(p, "name"), "must not be empty"))
        if not ref.uid:
            errs.append(required(child(p, "uid"), "must not be empty"))
        if ref.HasField("controller") and ref.controller:
            current = f"{ref.kind}/{ref.name}"
            if controller:
                errs.append(
                    invalid(
                        path,
                        [f"{r.kind}/{r.name}" for r in refs],
                        'Only one reference can have Controller set to true. Found "true" in references for '
                        f"{controller} and {current}",
                    )
                )
            else:
                controller = current
    return errs


def validate_object_meta(meta: Any, requires_namespace: bool, name_fn: NameFunc, path: str = "metadata") -> ErrorList:
    """apimachinery ValidateObjectMetaAccessor (plus core's finalizer-name check).

    For cluster-scoped kinds the loader clears the namespace first, as the API server's BeforeCreate
    does, so `not allowed on this type` only shows for objects built in code.
    """
    errs: ErrorList = []
    generate_name = meta.generateName
    if generate_name:
        for m in name_fn(generate_name, True):
            errs.append(invalid(child(path, "generateName"), generate_name, m))
    name = meta.name
    if not name:
        errs.append(required(child(path, "name"), "name or generateName is required"))
    else:
        for m in name_fn(name, False):
            errs.append(invalid(child(path, "name"), name, m))
    namespace = meta.namespace
    if requires_namespace:
        if not namespace:
            errs.append(required(child(path, "namespace")))
        else:
            for m in name_is_dns_label(namespace, False):
                errs.append(invalid(child(path, "namespace"), namespace, m))
    elif namespace:
        errs.append(forbidden(child(path, "namespace"), "not allowed on this type"))
    checks = _META_CHECKS
    for fd, value in meta.ListFields():
        check = checks.get(fd.name)
        if check is not None:
            errs.extend(check(value, child(path, fd.name)))
    return errs


# ObjectMeta field -> check(value, its path), for the fields an object sets.
_META_CHECKS: dict[str, Callable[[Any, str], ErrorList]] = {
    "generation": validate_nonnegative_field,
    "labels": validate_labels,
    "annotations": validate_annotations,
    "ownerReferences": _validate_owner_references,
    "finalizers": _validate_finalizers,
}


def validate_label_selector_requirement(req: Any, path: str, allow_invalid_label_value: bool = False) -> ErrorList:
    """metav1validation.ValidateLabelSelectorRequirement."""
    errs: ErrorList = []
    op = req.operator
    if op in ("In", "NotIn"):
        if not req.values:
            errs.append(required(child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if req.values:
            errs.append(
                forbidden(child(path, "values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            )
    else:
        errs.append(invalid(child(path, "operator"), op, "not a valid selector operator"))
    errs.extend(validate_requirement_key_and_values(req, path, allow_invalid_label_value))
    return errs


def validate_requirement_key_and_values(req: Any, path: str, allow_invalid_label_value: bool) -> ErrorList:
    """The part label and node selector requirements share: the key is a label name, each value a
    label value (unless the caller allows invalid values, as kube does for existing objects)."""
    errs = validate_label_name(req.key, child(path, "key"))
    if not allow_invalid_label_value:
        for i, v in enumerate(req.values):
            for m in is_valid_label_value(v):
                errs.append(invalid(index(child(path, "values"), i), v, m))
    return errs


def validate_label_selector(selector: Any, path: str, allow_invalid_label_value: bool = False) -> ErrorList:
    """metav1validation.ValidateLabelSelector (a nil selector is valid)."""
    errs: ErrorList = []
    if selector.matchLabels:
        errs.extend(validate_labels(selector.matchLabels, child(path, "matchLabels")))
    for i, expr in enumerate(selector.matchExpressions):
        errs.extend(
            validate_label_selector_requirement(
                expr, index(child(path, "matchExpressions"), i), allow_invalid_label_value
            )
        )
    return errs


def label_selector_value(selector: Any) -> dict[str, Any]:
    """A *metav1.LabelSelector as a field error prints it (JSON, empty fields omitted)."""
    out: dict[str, Any] = {}
    if selector.matchLabels:
        out["matchLabels"] = dict(sorted(selector.matchLabels.items()))
    if selector.matchExpressions:
        out["matchExpressions"] = [
            {"key": e.key, "operator": e.operator, **({"values": list(e.values)} if e.values else {})}
            for e in selector.matchExpressions
        ]
    return out
