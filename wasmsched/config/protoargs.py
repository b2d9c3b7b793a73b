"""Core API values inside plugin args (NodeAffinity, TopologySpreadConstraint): strict decoding into
the generated protobuf messages, and the checks kube-scheduler runs on them
(component-helpers nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms, labels.NewRequirement).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, cast

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from wasmsched.api.convert import ConversionError, dict_to_message
from wasmsched.api.gen.k8s_io.api.core.v1 import generated_pb2 as core
from wasmsched.api.validation import is_qualified_name, is_valid_label_value
from wasmsched.config.decode import read_int, type_error
from wasmsched.config.errors import OMIT, FieldError, child, index, invalid, key, not_supported, unknown_field
from wasmsched.util.intbounds import INT32, INT64

M = TypeVar("M", bound=Message)

_INT_BOUNDS = {FieldDescriptor.CPPTYPE_INT32: INT32, FieldDescriptor.CPPTYPE_INT64: INT64}


def _check_scalar(f: FieldDescriptor, v: Any, path: str, errors: list[FieldError]) -> None:
    if f.cpp_type == FieldDescriptor.CPPTYPE_STRING and not isinstance(v, str):
        errors.append(type_error(path, v, "string"))
    elif f.cpp_type == FieldDescriptor.CPPTYPE_BOOL and not isinstance(v, bool):
        errors.append(type_error(path, v, "bool"))
    elif f.cpp_type in _INT_BOUNDS:
        read_int(v, path, errors, None, _INT_BOUNDS[f.cpp_type])


def _check_value(f: FieldDescriptor, v: Any, path: str, errors: list[FieldError]) -> None:
    if f.message_type is not None:
        check_message_dict(v, f.message_type, path, errors)
    else:
        _check_scalar(f, v, path, errors)


def check_message_dict(value: Any, desc: Descriptor, path: str, errors: list[FieldError]) -> None:
    """Strict check of a decoded YAML value against a message type: unknown keys and wrong types."""
    if not isinstance(value, dict):
        errors.append(type_error(path, value, "object"))
        return
    for k, v in value.items():
        p = child(path, str(k))
        f = desc.fields_by_name.get(k) if isinstance(k, str) else None
        if f is None:
            errors.append(unknown_field(p, str(k), desc.fields_by_name))
            continue
        if v is None:
            continue
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            if not isinstance(v, dict):
                errors.append(type_error(p, v, "object"))
                continue
            vf = f.message_type.fields_by_name["value"]
            for mk, mv in v.items():
                _check_value(vf, mv, key(p, str(mk)), errors)
        elif f.is_repeated:
            if not isinstance(v, list):
                errors.append(type_error(p, v, "array"))
                continue
            for i, item in enumerate(v):
                _check_value(f, item, index(p, i), errors)
        else:
            _check_value(f, v, p, errors)


def decode_message(cls: type[M], value: Any, path: str, errors: list[FieldError]) -> M | None:
    """Strictly decode a YAML value into a message of type `cls`; None (with errors) if it is invalid."""
    before = len(errors)
    check_message_dict(value, cast(Descriptor, cls.DESCRIPTOR), path, errors)
    if len(errors) > before:
        return None
    try:
        return dict_to_message(value, cls)
    except ConversionError as e:  # pragma: no cover - the strict check above rejects first
        sub = path + e.path if e.path.startswith("[") else child(path, e.path)
        errors.append(invalid(sub if e.path else path, OMIT, e.message))
        return None


# --- node selector checks --------------------------------------------------------------------

_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_SELECTOR_OPS = ("In", "NotIn")


def _is_int64(s: str) -> bool:
    try:
        v = int(s, 10)
    except ValueError:
        return False
    return INT64[0] <= v <= INT64[1] and s.isascii() and s.strip() == s and "_" not in s


def requirement_errors(k: str, op: str, values: Sequence[str], path: str) -> list[FieldError]:
    """labels.NewRequirement's checks, with the node-affinity operator names."""
    errs: list[FieldError] = []
    if msgs := is_qualified_name(k):
        errs.append(invalid(child(path, "key"), k, "; ".join(msgs)))
    vpath = child(path, "values")
    vals = list(values)
    if op in ("In", "NotIn"):
        if not vals:
            errs.append(invalid(vpath, vals, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist"):
        if vals:
            errs.append(invalid(vpath, vals, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(vals) != 1:
            errs.append(invalid(vpath, vals, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals):
            if not _is_int64(v):
                errs.append(
                    invalid(index(vpath, i), v, "for 'Gt', 'Lt' operators, the value must be an integer")
                )
    for i, v in enumerate(vals):
        if msgs := is_valid_label_value(v):
            errs.append(invalid(key(index(vpath, i), k), v, "; ".join(msgs)))
    return errs


def _term_is_empty(term: core.NodeSelectorTerm) -> bool:
    return len(term.matchExpressions) == 0 and len(term.matchFields) == 0


def node_selector_term_errors(term: core.NodeSelectorTerm, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    mpath = child(path, "matchExpressions")
    for i, expr in enumerate(term.matchExpressions):
        p = index(mpath, i)
        if expr.operator not in _SELECTOR_OPS:
            errs.append(not_supported(child(p, "operator"), expr.operator, _SELECTOR_OPS))
            continue
        errs.extend(requirement_errors(expr.key, expr.operator, expr.values, p))
    fpath = child(path, "matchFields")
    for i, expr in enumerate(term.matchFields):
        p = index(fpath, i)
        if expr.operator in _FIELD_SELECTOR_OPS:
            if len(expr.values) != 1:
                errs.append(invalid(child(p, "values"), list(expr.values), "must have one element"))
        else:
            errs.append(not_supported(child(p, "operator"), expr.operator, _FIELD_SELECTOR_OPS))
    return errs


def node_affinity_errors(aff: core.NodeAffinity, path: str) -> list[FieldError]:
    """ValidateNodeAffinityArgs on `addedAffinity` at `path`."""
    errs: list[FieldError] = []
    if aff.HasField("requiredDuringSchedulingIgnoredDuringExecution"):
        p = child(child(path, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms")
        for i, term in enumerate(aff.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms):
            if not _term_is_empty(term):
                errs.extend(node_selector_term_errors(term, index(p, i)))
    p = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, pref in enumerate(aff.preferredDuringSchedulingIgnoredDuringExecution):
        # As kube: zero-weight or empty terms are skipped, and the path has no `.preference`.
        if pref.weight == 0 or _term_is_empty(pref.preference):
            continue
        errs.extend(node_selector_term_errors(pref.preference, index(p, i)))
    return errs
