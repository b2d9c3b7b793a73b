"""What PodInfo and plugins read of a pod's spec and status, shared by the pods of one shape.

Reading protobuf fields from Python costs microseconds each, while serializing a whole pod spec costs
about one: the replicas of a workload, identical but for their metadata, are read once. A PodShape is
keyed by the bytes of the pod's spec and status (equal bytes are equal messages), so nothing in it may
depend on the pod's metadata (name, namespace, labels, owner).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from wasmsched.api import resources as res
from wasmsched.api.types import Pod
from wasmsched.framework.memo import Memo, new_memo

# framework.DefaultBindAllHostIP: a host port without hostIP binds every address; and the protocol of a
# port without one.
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"
DEFAULT_PROTOCOL = "TCP"

HostPort = tuple[str, str, int]  # (hostIP, protocol, hostPort), sanitized


def get_host_ports(pod: Pod) -> list[HostPort]:
    """The pod's host ports (schedutil.GetHostPorts): sidecar init containers, then containers.

    Only ports with hostPort > 0; init containers count only when they run for the pod's whole
    life (restartPolicy Always).
    """
    containers = [c for c in pod.spec.initContainers if c.restartPolicy == "Always"]
    containers.extend(pod.spec.containers)
    return [
        (p.hostIP or DEFAULT_BIND_ALL_HOST_IP, p.protocol or DEFAULT_PROTOCOL, p.hostPort)
        for c in containers
        for p in c.ports
        if p.hostPort > 0
    ]


@dataclass(frozen=True, slots=True)
class PodShape:
    """A pod's requests and host ports, and plugins' values computed from its spec and status only
    (`memo`, see plugins/helper/podmemo.py shape_memoized). Shared by every pod of the shape: read only."""

    request_inputs: res.PodRequestInputs
    requests: res.ResourceList  # resource.PodRequests
    non_zero_requests: tuple[int, int]  # (milli-cpu, memory) with the scheduler's defaults
    host_ports: list[HostPort]
    memo: Memo = field(default_factory=new_memo)


def read_pod_shape(pod: Pod) -> PodShape:
    inputs = res.pod_request_inputs(pod)
    return PodShape(inputs, res.pod_requests(inputs), res.pod_nonzero_requests(inputs), get_host_ports(pod))


class PodShapes:
    """PodShapes by the bytes of pods' spec and status: the most recently made `capacity` of them."""

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self._shapes: dict[tuple[bytes, bytes], PodShape] = {}
        # Pods are queued from informer threads too.
        self._lock = threading.Lock()

    def of(self, pod: Pod) -> PodShape:
        key = (pod.spec.SerializeToString(), pod.status.SerializeToString())
        shape = self._shapes.get(key)
        if shape is None:
            shape = read_pod_shape(pod)
            with self._lock:
                if len(self._shapes) >= self.capacity:
                    del self._shapes[next(iter(self._shapes))]  # the oldest
                self._shapes[key] = shape
        return shape

    def __len__(self) -> int:
        return len(self._shapes)
