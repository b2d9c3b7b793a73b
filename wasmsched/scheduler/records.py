"""What the scheduler learned about each pod it tried, for reports (simulate) and tests.

kube-scheduler keeps this only in events, conditions and metrics; a simulation also wants the last
attempt's verdict and --explain data per pod, so the scheduler records them here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from wasmsched.api.types import Pod, pod_key
from wasmsched.framework.status import Status
from wasmsched.scheduler.algorithm import CycleExplain


@dataclass
class PodRecord:
    attempts: int = 0
    message: str = ""
    reason: str = ""
    explain: CycleExplain | None = None
    last_status: Status | None = None
    gave_up: bool = False


class PodRecords(Mapping[str, PodRecord]):
    """PodRecord per "namespace/name"; scheduling and binding threads update them concurrently."""

    def __init__(self) -> None:
        self._records: dict[str, PodRecord] = {}
        self._lock = threading.Lock()

    def of(self, pod: Pod) -> PodRecord:
        key = pod_key(pod)
        with self._lock:
            rec = self._records.get(key)
            if rec is None:
                rec = self._records[key] = PodRecord()
            return rec

    def forget(self, pod: Pod) -> None:
        """Drops a deleted pod's record (`run`: nothing reports on it later, and a long-running scheduler
        would keep one per pod it ever saw)."""
        with self._lock:
            self._records.pop(pod_key(pod), None)

    def __getitem__(self, key: str) -> PodRecord:
        with self._lock:
            return self._records[key]

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._records))

    def __len__(self) -> int:
        return len(self._records)
