"""klog's conventions in Python logging.

Structured values: a string value in a log line is quoted as Go's %q would (JSON's quoting, non-ASCII
kept), so an error text with quotes or newlines stays one parseable `key="value"`.

Verbosity: klog's `V(0).Info` lines are shown whatever -v says (kube logs start-up, serving and leader
election milestones so); wasmsched's plain `info` lines are kube's V(2) and show from -v 2 on. A line
kube logs at V(0) is logged at level V0: `log.log(V0, '"Serving securely on %s"', addr)`.
"""

from __future__ import annotations

import json
import logging

# Between INFO (shown from -v 2) and WARNING (always shown); -v 0 shows it (wasmsched/cli/logs.py).
V0 = logging.INFO + 5
logging.addLevelName(V0, "INFO")


def quote(value: object) -> str:
    return json.dumps(str(value), ensure_ascii=False)
