"""Name and label validation as in k8s.io/apimachinery/pkg/util/validation (the parts selectors need)."""

from __future__ import annotations

import re

_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile(f"^{_QUALIFIED_NAME_FMT}$")
_DNS1123_SUBDOMAIN_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_LABEL_VALUE_RE = re.compile(f"^({_QUALIFIED_NAME_FMT})?$")
_INT64_RE = re.compile(r"^[+-]?[0-9]+$")

QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253

_QUALIFIED_NAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '"
    + _QUALIFIED_NAME_FMT
    + "')"
)
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is '(" + _QUALIFIED_NAME_FMT + ")?')"
)
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '"
    + _DNS1123_SUBDOMAIN_FMT
    + "')"
)


def is_qualified_name(value: str) -> list[str]:
    """Errors of IsQualifiedName: an optional DNS-subdomain prefix and "/", then a 63-char name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + e for e in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _QUALIFIED_NAME_ERR
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append(f"name part must be no more than {QUALIFIED_NAME_MAX_LENGTH} characters")
    if name and not _QUALIFIED_NAME_RE.match(name):
        errs.append("name part " + _QUALIFIED_NAME_ERR)
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """Errors of IsDNS1123Subdomain."""
    errs: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters")
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(_DNS1123_SUBDOMAIN_ERR)
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """Errors of IsValidLabelValue: empty, or a 63-char qualified-name-like string."""
    errs: list[str] = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(f"must be no more than {LABEL_VALUE_MAX_LENGTH} characters")
    if not _LABEL_VALUE_RE.match(value):
        errs.append(_LABEL_VALUE_ERR)
    return errs


def parse_int64(value: str) -> int | None:
    """strconv.ParseInt(value, 10, 64), or None when Go would fail."""
    if not _INT64_RE.match(value):
        return None
    n = int(value)
    if not -(1 << 63) <= n < (1 << 63):
        return None
    return n
