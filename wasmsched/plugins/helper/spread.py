"""DefaultSelector (helper/spread.go), used for PodTopologySpread's system default constraints."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from wasmsched.api.labels import Selector, SelectorError, compile_optional_label_selector, selector_from_set
from wasmsched.api.types import OwnerReference, Pod, Service

if TYPE_CHECKING:
    from wasmsched.framework.interface import Handle

# The controller kinds whose selector DefaultSelector adds, by (group/version, kind) of the owner reference.
_RC = ("v1", "ReplicationController")
_RS = ("apps/v1", "ReplicaSet")
_SS = ("apps/v1", "StatefulSet")


def default_selector(pod: Pod, handle: Handle) -> Selector:
    """The selector kube deduces from the Services, ReplicationControllers, ReplicaSets and
    StatefulSets matching the pod: the selectors of its Services, merged as one label set, ANDed
    with its controlling owner's selector when that is an RC, RS or StatefulSet of its namespace.

    With none of those it is the empty label set's selector (matches everything, and is "empty"),
    which makes PodTopologySpread drop its system default constraints.
    """
    client = handle.client()
    namespace = pod.metadata.namespace
    # Services, RCs, RSs and SSs that match the pod don't have conflicting labels: merging is safe.
    label_set: dict[str, str] = {}
    for svc in get_pod_services(client.list_in_namespace("Service", namespace), pod):
        label_set.update(svc.spec.selector)
    selector = selector_from_set(label_set)

    owner = _controller_of(pod)
    if owner is None:
        return selector
    gvk = (_group_version(owner.apiVersion), owner.kind)
    if gvk not in (_RC, _RS, _SS):
        return selector  # not owned by a supported controller (or an unparsable apiVersion)
    controller = _get(client.list_in_namespace(owner.kind, namespace), owner.name)
    if controller is None:
        return selector
    if gvk == _RC:
        label_set.update(controller.spec.selector)
        return selector_from_set(label_set)
    try:
        other = compile_optional_label_selector(controller.spec, "selector")
    except SelectorError:
        return selector  # an invalid selector is skipped
    if other.nothing:
        return selector  # a nil selector: labels.Nothing() has no requirements to add
    return Selector(tuple(sorted(selector.requirements + other.requirements, key=lambda r: r.key)))


def get_pod_services(services: Iterable[Service], pod: Pod) -> list[Service]:
    """GetPodServices: the services (of the pod's namespace) whose selector matches the pod's labels;
    a service without a selector matches nothing."""
    labels = pod.metadata.labels
    out = []
    for svc in services:
        sel = svc.spec.selector
        if not sel:
            # kube: a nil selector matches nothing; an empty one matches everything but adds no label
            continue
        if all(labels.get(k) == v for k, v in sel.items()):
            out.append(svc)
    return out


def _controller_of(pod: Pod) -> OwnerReference | None:
    """metav1.GetControllerOfNoCopy: the first owner reference with controller: true."""
    for ref in pod.metadata.ownerReferences:
        if ref.HasField("controller") and ref.controller:
            return ref
    return None


def _group_version(api_version: str) -> str | None:
    """schema.ParseGroupVersion's result as "group/version" (or "version" for the core group); None
    when it is an error (more than one slash). The empty string parses to the empty GroupVersion."""
    if api_version.count("/") > 1:
        return None
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        # ParseGroupVersion("/v1") is the core group's v1
        return f"{group}/{version}" if group else version
    return api_version


def _get(objects: Iterable[Any], name: str) -> Any | None:
    """The lister's Get(name) over the objects of one namespace."""
    for obj in objects:
        if obj.metadata.name == name:
            return obj
    return None
