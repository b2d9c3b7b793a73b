"""API validation as kube-apiserver runs it: apimachinery's name checks (`util`), field errors
(`field`), object metadata and label selectors (`meta`), and the API groups' validation of the
kinds wasmsched loads (`core`, `policy`, `scheduling`), dispatched by kind in `objects`.

The name checks are re-exported here, where the rest of wasmsched has always imported them.
"""

from wasmsched.api.validation.util import (
    DNS1123_LABEL_MAX_LENGTH,
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    LABEL_VALUE_MAX_LENGTH,
    QUALIFIED_NAME_MAX_LENGTH,
    inclusive_range_error,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    is_valid_percent,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns_label,
    name_is_dns_subdomain,
    parse_int64,
)

__all__ = [
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "LABEL_VALUE_MAX_LENGTH",
    "QUALIFIED_NAME_MAX_LENGTH",
    "inclusive_range_error",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "is_valid_percent",
    "is_valid_port_name",
    "is_valid_port_num",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "parse_int64",
]
