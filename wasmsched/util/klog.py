"""klog's structured values: a string value in a log line is quoted as Go's %q would (JSON's quoting,
non-ASCII kept), so an error text with quotes or newlines stays one parseable `key="value"`."""

from __future__ import annotations

import json


def quote(value: object) -> str:
    return json.dumps(str(value), ensure_ascii=False)
