"""Name and label validation as in k8s.io/apimachinery/pkg/util/validation.

Messages are kube's, character for character, since they end up in user-facing errors (selector
parsing, the scheduler config validation and the API validation of manifests use them). Results are
cached: manifests repeat the same few label keys, values and names thousands of times.
"""

from __future__ import annotations

import functools
import re

from wasmsched.util.intbounds import INT64_MAX, INT64_MIN

_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_LABEL_VALUE_FMT = f"({_QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_INT64_RE = re.compile(r"^[+-]?[0-9]+$")
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_PERCENT_FMT = "[0-9]+%"
_PERCENT_RE = re.compile(_PERCENT_FMT)
_PORT_NAME_CHARSET_RE = re.compile("[-a-z0-9]+")
_PORT_NAME_ONE_LETTER_RE = re.compile("[a-z]")
# Values far longer than any valid one get only the length error: the format regexes backtrack, and
# running them over megabytes would stall the loader for nothing.
_REGEX_INPUT_LIMIT = 4096

QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1123_LABEL_MAX_LENGTH = 63

_QUALIFIED_NAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_PERCENT_ERR = "a valid percent string must be a numeric string followed by an ending '%'"
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)


def _empty_error() -> str:
    return "must be non-empty"


def _max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError (its doubled spaces between examples included)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += f"'{ex}', "
    return msg + f"regex used for validation is '{fmt}')"


def _match(regex: re.Pattern[str], value: str) -> bool:
    # Go's regexp `^...$` never matches across a trailing newline, unlike Python's `$`.
    if len(value) > _REGEX_INPUT_LIMIT:
        return True  # the length error has been reported
    return regex.fullmatch(value) is not None


def inclusive_range_error(lo: int, hi: int) -> str:
    """validation.InclusiveRangeError."""
    return f"must be between {lo} and {hi}, inclusive"


def is_qualified_name(value: str) -> list[str]:
    """Errors of IsQualifiedName (cached; a copy each call)."""
    return list(qualified_name_errors(value))


@functools.lru_cache(maxsize=8192)
def qualified_name_errors(value: str) -> tuple[str, ...]:
    """is_qualified_name as a cached tuple (for hot loops: no copy)."""
    return tuple(_is_qualified_name(value))


def _is_qualified_name(value: str) -> list[str]:
    """Errors of IsQualifiedName: an optional DNS-subdomain prefix and "/", then a 63-char name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + _empty_error())
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + _empty_error())
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + _max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _match(_QUALIFIED_NAME_RE, name):
        errs.append(
            "name part "
            + _regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """Errors of IsDNS1123Subdomain."""
    return list(_dns1123_subdomain_errors(value))


def is_valid_label_value(value: str) -> list[str]:
    """Errors of IsValidLabelValue: empty, or a 63-char qualified-name-like string."""
    return list(label_value_errors(value))


def parse_int64(value: str) -> int | None:
    """strconv.ParseInt(value, 10, 64), or None when Go would fail."""
    if not _INT64_RE.match(value):
        return None
    n = int(value)
    if not INT64_MIN <= n <= INT64_MAX:
        return None
    return n


@functools.lru_cache(maxsize=8192)
def label_value_errors(value: str) -> tuple[str, ...]:
    """is_valid_label_value as a cached tuple (for hot loops: no copy)."""
    errs: list[str] = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(_max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _match(_LABEL_VALUE_RE, value):
        errs.append(_regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return tuple(errs)


@functools.lru_cache(maxsize=8192)
def _dns1123_subdomain_errors(value: str) -> tuple[str, ...]:
    errs: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(_max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _match(_DNS1123_SUBDOMAIN_RE, value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return tuple(errs)


@functools.lru_cache(maxsize=8192)
def _dns1123_label_errors(value: str) -> tuple[str, ...]:
    errs: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(_max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _match(_DNS1123_LABEL_RE, value):
        if _match(_DNS1123_SUBDOMAIN_RE, value):
            # a valid subdomain but not a valid label: with the length checked, it must be dots
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return tuple(errs)


def is_dns1123_label(value: str) -> list[str]:
    """Errors of IsDNS1123Label."""
    return list(_dns1123_label_errors(value))


def _mask_trailing_dash(name: str) -> str:
    """maskTrailingDash: a generateName prefix may end in '-'."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """apimachinery NameIsDNSSubdomain."""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """apimachinery NameIsDNSLabel (ValidateNamespaceName)."""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def validate_path_segment_name(name: str, prefix: bool) -> list[str]:
    """path.ValidatePathSegmentName: the only rule the generic registry applies to every name."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def is_valid_port_num(port: int) -> list[str]:
    """IsValidPortNum."""
    if 1 <= port <= 65535:
        return []
    return [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    """IsValidPortName (IANA_SVC_NAME)."""
    errs: list[str] = []
    if len(port) > 15:
        errs.append(_max_len_error(15))
    if not _match(_PORT_NAME_CHARSET_RE, port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if _PORT_NAME_ONE_LETTER_RE.search(port) is None:
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_valid_percent(value: str) -> list[str]:
    """IsValidPercent."""
    if _match(_PERCENT_RE, value):
        return []
    return [_regex_error(_PERCENT_ERR, _PERCENT_FMT, "1%", "93%")]
