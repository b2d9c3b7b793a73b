"""pkg/apis/core/validation for the core kinds wasmsched loads: ValidatePodCreate, ValidateNode and
ValidateNamespace, with kube's field paths and messages.

Objects are validated after wasmsched's defaulting, like the API server validates after its own.
Fields the API server defaults (restartPolicy, dnsPolicy, terminationGracePeriodSeconds, a
container's imagePullPolicy, terminationMessagePolicy, a port's protocol) are therefore only checked
when set: an empty value stands for the default. Volumes, probes, security contexts, environment
variables and DNS config are not validated: nothing in a scheduler reads them.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from wasmsched.api.quantity import cached_quantity
from wasmsched.api.resources import is_extended_resource_name, is_native_resource
from wasmsched.api.validation.field import (
    ErrorList,
    FieldError,
    GoStruct,
    child,
    duplicate,
    forbidden,
    index,
    invalid,
    key,
    not_supported,
    required,
)
from wasmsched.api.validation.meta import (
    IS_NEGATIVE_ERROR_MSG,
    validate_label_name,
    validate_label_selector,
    validate_labels,
    validate_object_meta,
    validate_requirement_key_and_values,
)
from wasmsched.api.validation.util import (
    _dns1123_label_errors,
    inclusive_range_error,
    is_dns1123_label,
    is_qualified_name,
    is_valid_label_value,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns_label,
    name_is_dns_subdomain,
    parse_int64,
)
from wasmsched.util.intbounds import INT32_MAX
from wasmsched.util.klog import quote

IS_NOT_INTEGER_ERROR_MSG = "must be an integer"
IS_NOT_POSITIVE_ERROR_MSG = "must be greater than zero"

_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# Lt and Gt are accepted: wasmsched's TaintToleration implements TaintTolerationComparisonOperators.
_TOLERATION_OPS = ("Equal", "Exists", "Lt", "Gt")
_NODE_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")  # sorted, as sets.List gives them
_NODE_INCLUSION_POLICIES = ("Honor", "Ignore")
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")  # sorted
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")  # sorted
_OS_NAMES = ("linux", "windows")
_HIGHEST_USER_DEFINABLE_ACTIVE_DEADLINE = INT32_MAX
# nodeDeclaredFeatureRegexp: an UpperCamelCase first segment, further segments after '/' in upper or
# lower camel case (matched whole, as Go's ^...$).
_NODE_DECLARED_FEATURE_RE = re.compile(r"[A-Z][a-zA-Z0-9]*(/[a-zA-Z][a-zA-Z0-9]*)*")
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253

# helper.IsStandardResourceName, IsStandardContainerResourceName and IsIntegerResourceName.
_STANDARD_RESOURCES = frozenset(
    {
        "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
        "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
        "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage",
        "requests.storage", "services.nodeports", "services.loadbalancers",
    }
)  # fmt: skip
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_INTEGER_RESOURCES = frozenset(
    {
        "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
        "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
    }
)  # fmt: skip
_POD_LEVEL_RESOURCES = ("cpu", "memory")  # plus hugepages-*
_HUGEPAGES_PREFIX = "hugepages-"


# ---------------------------------------------------------------- resources


def _is_hugepage(name: str) -> bool:
    return name.startswith(_HUGEPAGES_PREFIX)


def _is_standard_resource_name(name: str) -> bool:
    return name in _STANDARD_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))


def _is_integer_resource_name(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource_name(name)


def _is_overcommit_allowed(name: str) -> bool:
    return is_native_resource(name) and not _is_hugepage(name)


def validate_resource_name(name: str, path: str) -> ErrorList:
    """validateResourceName."""
    if msgs := is_qualified_name(name):
        return [invalid(path, name, m) for m in msgs]
    if "/" not in name and not _is_standard_resource_name(name):
        return [invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def validate_container_resource_name(name: str, path: str) -> ErrorList:
    """validateContainerResourceName."""
    if name in _STANDARD_CONTAINER_RESOURCES:
        return []
    errs = validate_resource_name(name, path)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER_RESOURCES or _is_hugepage(name)):
            errs.append(invalid(path, name, "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource_name(name):
        errs.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def _validate_pod_resource_name(name: str, path: str) -> ErrorList:
    """validatePodResourceName."""
    if errs := validate_resource_name(name, path):
        return errs
    if name not in _POD_LEVEL_RESOURCES and not _is_hugepage(name):
        return [FieldError("Unsupported value", path, name, 'supported values: "cpu", "hugepages-", "memory"')]
    return []


def validate_resource_quantity_value(name: str, q: Any, path: str) -> ErrorList:
    """ValidateResourceQuantityValue: not negative; whole numbers for integer resources."""
    errs: ErrorList = []
    parsed = cached_quantity(q.string)
    if parsed.amount < 0:
        errs.append(invalid(path, str(parsed), IS_NEGATIVE_ERROR_MSG))
    if _is_integer_resource_name(name) and parsed.milli_value() % 1000 != 0:
        errs.append(invalid(path, str(parsed), IS_NOT_INTEGER_ERROR_MSG))
    return errs


def _hugepage_size(name: str) -> int | None:
    try:
        return cached_quantity(name[len(_HUGEPAGES_PREFIX) :]).value()
    except ValueError:
        return None


def _validate_hugepage_value(name: str, q: Any, path: str) -> ErrorList:
    """validateResourceQuantityHugePageValue (AllowIndivisibleHugePagesValues off, as on create)."""
    size = _hugepage_size(name)
    value = cached_quantity(q.string).value()
    if not size or size <= 0 or value % size != 0:
        text = str(cached_quantity(q.string))
        return [invalid(path, text, f"{text} is not positive integer multiple of {name}")]
    return []


@functools.lru_cache(maxsize=4096)
def _plain_quantity(name: str, text: str) -> bool:
    """Whether (name, quantity) can have no error at all: a standard container resource with a
    non-negative value (the common case, answered from a cache)."""
    return name in _STANDARD_CONTAINER_RESOURCES and cached_quantity(text).amount >= 0


def validate_resource_requirements(req: Any, path: str, name_fn: Any = validate_container_resource_name) -> ErrorList:
    """validateResourceRequirements (limits, then requests against limits)."""
    # the common case (requests of cpu and memory only): nothing to compare, paths never built
    if not req.limits:
        requests = req.requests
        for n in requests:
            if not _plain_quantity(n, requests[n].string):
                break
        else:
            return []
    return _validate_resource_requirements(req, path, name_fn)


def _validate_resource_requirements(req: Any, path: str, name_fn: Any) -> ErrorList:
    errs: ErrorList = []
    lim_path = child(path, "limits")
    req_path = child(path, "requests")
    limits = req.limits
    requests = req.requests
    has_compute = has_hugepages = False
    for name, q in limits.items():
        p = key(lim_path, name)
        errs.extend(name_fn(name, p))
        errs.extend(validate_resource_quantity_value(name, q, p))
        if _is_hugepage(name):
            has_hugepages = True
            errs.extend(_validate_hugepage_value(name, q, p))
        if name in ("cpu", "memory"):
            has_compute = True
    for name, q in requests.items():
        p = key(req_path, name)
        errs.extend(name_fn(name, p))
        errs.extend(validate_resource_quantity_value(name, q, p))
        if name in limits:
            request = cached_quantity(q.string)
            limit = cached_quantity(limits[name].string)
            if request.amount != limit.amount and not _is_overcommit_allowed(name):
                errs.append(invalid(req_path, str(request), f"must be equal to {name} limit of {limit}"))
            elif request.amount > limit.amount:
                errs.append(invalid(req_path, str(request), f"must be less than or equal to {name} limit of {limit}"))
        elif not _is_overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        if _is_hugepage(name):
            has_hugepages = True
            errs.extend(_validate_hugepage_value(name, q, p))
        if name in ("cpu", "memory"):
            has_compute = True
    if has_hugepages and not has_compute:
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    return errs


# ---------------------------------------------------------------- node selectors and affinity


def validate_node_selector_requirement(req: Any, path: str, allow_invalid_label_value: bool = False) -> ErrorList:
    """ValidateNodeSelectorRequirement."""
    errs: ErrorList = []
    op = req.operator
    vpath = child(path, "values")
    if op in ("In", "NotIn"):
        if not req.values:
            errs.append(required(vpath, "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if req.values:
            errs.append(forbidden(vpath, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(req.values) != 1:
            errs.append(required(vpath, "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(invalid(child(path, "operator"), op, "not a valid selector operator"))
    errs.extend(validate_requirement_key_and_values(req, path, allow_invalid_label_value))
    return errs


def _validate_node_field_selector_requirement(req: Any, path: str) -> ErrorList:
    """ValidateNodeFieldSelectorRequirement: only metadata.name, with In/NotIn and one value."""
    errs: ErrorList = []
    if req.operator in ("In", "NotIn"):
        if len(req.values) != 1:
            errs.append(
                required(
                    child(path, "values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        errs.append(invalid(child(path, "operator"), req.operator, "not a valid selector operator"))
    if req.key != "metadata.name":
        errs.append(invalid(child(path, "key"), req.key, "not a valid field selector key"))
    else:
        for i, v in enumerate(req.values):
            for m in name_is_dns_subdomain(v, False):
                errs.append(invalid(index(child(path, "values"), i), v, m))
    return errs


def validate_node_selector_term(term: Any, path: str, allow_invalid_label_value: bool = False) -> ErrorList:
    """ValidateNodeSelectorTerm."""
    errs: ErrorList = []
    for j, req in enumerate(term.matchExpressions):
        req_path = index(child(path, "matchExpressions"), j)
        errs.extend(validate_node_selector_requirement(req, req_path, allow_invalid_label_value))
    for j, req in enumerate(term.matchFields):
        errs.extend(_validate_node_field_selector_requirement(req, index(child(path, "matchFields"), j)))
    return errs


def validate_node_selector(selector: Any, path: str) -> ErrorList:
    """ValidateNodeSelector."""
    terms_path = child(path, "nodeSelectorTerms")
    if not selector.nodeSelectorTerms:
        return [required(terms_path, "must have at least one node selector term")]
    errs: ErrorList = []
    for i, term in enumerate(selector.nodeSelectorTerms):
        errs.extend(validate_node_selector_term(term, index(terms_path, i)))
    return errs


def _validate_weight(weight: int, path: str) -> ErrorList:
    if weight <= 0 or weight > 100:
        return [invalid(path, weight, "must be in the range 1-100")]
    return []


def _validate_node_affinity(na: Any, path: str) -> ErrorList:
    errs: ErrorList = []
    if na.HasField("requiredDuringSchedulingIgnoredDuringExecution"):
        errs.extend(
            validate_node_selector(
                na.requiredDuringSchedulingIgnoredDuringExecution,
                child(path, "requiredDuringSchedulingIgnoredDuringExecution"),
            )
        )
    ppath = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(na.preferredDuringSchedulingIgnoredDuringExecution):
        p = index(ppath, i)
        errs.extend(_validate_weight(term.weight, child(p, "weight")))
        # preferred terms may use invalid label values: they can still match on a one-node cluster
        errs.extend(validate_node_selector_term(term.preference, child(p, "preference"), True))
    return errs


def _validate_label_keys(path: str, keys: Any, selector: Any) -> ErrorList:
    """validateLabelKeys (matchLabelKeys / mismatchLabelKeys of an affinity term)."""
    if not keys:
        return []
    if selector is None:
        return [forbidden(path, "must not be specified when labelSelector is not set")]
    errs: ErrorList = []
    for i, k in enumerate(keys):
        errs.extend(validate_label_name(k, index(path, i)))
    return errs


def _validate_match_label_keys_and_mismatch(path: str, term: Any) -> ErrorList:
    """validateMatchLabelKeysAndMismatchLabelKeys."""
    selector = term.labelSelector if term.HasField("labelSelector") else None
    match_keys = list(term.matchLabelKeys)
    mismatch_keys = list(term.mismatchLabelKeys)
    errs = _validate_label_keys(child(path, "matchLabelKeys"), match_keys, selector)
    errs.extend(_validate_label_keys(child(path, "mismatchLabelKeys"), mismatch_keys, selector))
    if selector is not None:
        positions = {k: i for i, k in enumerate(match_keys)}
        selector_keys = set(selector.matchLabels)
        for expr in selector.matchExpressions:
            i = positions.get(expr.key)
            if i is not None and expr.key in selector_keys:
                # kube's path here is the term's, indexed: a quirk kept as it is
                errs.append(invalid(index(path, i), expr.key, "exists in both matchLabelKeys and labelSelector"))
            selector_keys.add(expr.key)
    mismatch = set(mismatch_keys)
    for i, k in enumerate(match_keys):
        if k in mismatch:
            errs.append(
                invalid(
                    index(child(path, "matchLabelKeys"), i), k, "exists in both matchLabelKeys and mismatchLabelKeys"
                )
            )
    return errs


def _validate_pod_affinity_term(term: Any, path: str) -> ErrorList:
    """validatePodAffinityTerm."""
    errs: ErrorList = []
    if term.HasField("labelSelector"):
        errs.extend(validate_label_selector(term.labelSelector, child(path, "labelSelector")))
    if term.HasField("namespaceSelector"):
        errs.extend(validate_label_selector(term.namespaceSelector, child(path, "namespaceSelector")))
    for name in term.namespaces:
        for m in name_is_dns_label(name, False):
            errs.append(invalid(child(path, "namespace"), name, m))
    errs.extend(_validate_match_label_keys_and_mismatch(path, term))
    tpath = child(path, "topologyKey")
    if not term.topologyKey:
        errs.append(required(tpath, "can not be empty"))
    errs.extend(validate_label_name(term.topologyKey, tpath))
    return errs


def _validate_pod_affinity(aff: Any, path: str) -> ErrorList:
    """validatePodAffinity / validatePodAntiAffinity."""
    errs: ErrorList = []
    rpath = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(aff.requiredDuringSchedulingIgnoredDuringExecution):
        errs.extend(_validate_pod_affinity_term(term, index(rpath, i)))
    ppath = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, wterm in enumerate(aff.preferredDuringSchedulingIgnoredDuringExecution):
        p = index(ppath, i)
        errs.extend(_validate_weight(wterm.weight, child(p, "weight")))
        errs.extend(_validate_pod_affinity_term(wterm.podAffinityTerm, child(p, "podAffinityTerm")))
    return errs


def validate_affinity(affinity: Any, path: str) -> ErrorList:
    """validateAffinity."""
    errs: ErrorList = []
    if affinity.HasField("nodeAffinity"):
        errs.extend(_validate_node_affinity(affinity.nodeAffinity, child(path, "nodeAffinity")))
    if affinity.HasField("podAffinity"):
        errs.extend(_validate_pod_affinity(affinity.podAffinity, child(path, "podAffinity")))
    if affinity.HasField("podAntiAffinity"):
        errs.extend(_validate_pod_affinity(affinity.podAntiAffinity, child(path, "podAntiAffinity")))
    return errs


# ---------------------------------------------------------------- taints and tolerations


def _validate_taint_effect(effect: str, allow_empty: bool, path: str) -> ErrorList:
    """validateTaintEffect."""
    if not allow_empty and not effect:
        return [required(path)]
    if effect not in _TAINT_EFFECTS:
        return [not_supported(path, effect, _TAINT_EFFECTS)]
    return []


def validate_tolerations(tolerations: Any, path: str) -> ErrorList:
    """ValidateTolerations."""
    errs: ErrorList = []
    for i, t in enumerate(tolerations):
        p = index(path, i)
        if t.key:
            errs.extend(validate_label_name(t.key, child(p, "key")))
        if not t.key and t.operator != "Exists":
            errs.append(
                invalid(
                    child(p, "operator"),
                    t.operator,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if t.HasField("tolerationSeconds") and t.effect != "NoExecute":
            errs.append(
                invalid(child(p, "effect"), t.effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
            )
        op = t.operator
        if op in ("Equal", ""):
            if msgs := is_valid_label_value(t.value):
                errs.append(invalid(child(p, "operator"), t.value, ";".join(msgs)))
        elif op == "Exists":
            if t.value:
                errs.append(invalid(child(p, "operator"), t.value, "value must be empty when `operator` is 'Exists'"))
        elif op in ("Lt", "Gt"):
            if parse_int64(t.value) is None:
                errs.append(invalid(child(p, "value"), t.value, "value must be a valid integer for numeric operators"))
        else:
            errs.append(not_supported(child(p, "operator"), op, _TOLERATION_OPS))
        if t.effect:
            errs.extend(_validate_taint_effect(t.effect, True, child(p, "effect")))
    return errs


def validate_node_taints(taints: Any, path: str) -> ErrorList:
    """validateNodeTaints."""
    errs: ErrorList = []
    unique: dict[str, set[str]] = {}
    for i, t in enumerate(taints):
        p = index(path, i)
        errs.extend(validate_label_name(t.key, child(p, "key")))
        if msgs := is_valid_label_value(t.value):
            errs.append(invalid(child(p, "value"), t.value, ";".join(msgs)))
        errs.extend(_validate_taint_effect(t.effect, False, child(p, "effect")))
        keys = unique.setdefault(t.effect, set())
        if t.key in keys:
            # kube prints the internal core.Taint, whose JSON has the Go field names
            value = GoStruct((("Key", t.key), ("Value", t.value), ("Effect", t.effect), ("TimeAdded", None)))
            errs.append(FieldError("Duplicate value", p, value, "taints must be unique by key and effect pair"))
            continue
        keys.add(t.key)
    return errs


# ---------------------------------------------------------------- topology spread


def _validate_topology_spread_constraints(constraints: Any, path: str) -> ErrorList:
    """validateTopologySpreadConstraints."""
    errs: ErrorList = []
    items = list(constraints)
    for i, c in enumerate(items):
        p = index(path, i)
        if c.maxSkew <= 0:
            errs.append(invalid(child(p, "maxSkew"), c.maxSkew, IS_NOT_POSITIVE_ERROR_MSG))
        if not c.topologyKey:
            errs.append(required(child(p, "topologyKey"), "can not be empty"))
        if c.whenUnsatisfiable not in _WHEN_UNSATISFIABLE:
            errs.append(not_supported(child(p, "whenUnsatisfiable"), c.whenUnsatisfiable, _WHEN_UNSATISFIABLE))
        for other in items[i + 1 :]:
            if c.topologyKey == other.topologyKey and c.whenUnsatisfiable == other.whenUnsatisfiable:
                errs.append(
                    duplicate(
                        child(p, "{topologyKey, whenUnsatisfiable}"), f"{{{c.topologyKey}, {c.whenUnsatisfiable}}}"
                    )
                )
                break
        if c.HasField("minDomains"):
            mpath = child(p, "minDomains")
            if c.minDomains <= 0:
                errs.append(invalid(mpath, c.minDomains, IS_NOT_POSITIVE_ERROR_MSG))
            if c.whenUnsatisfiable != "DoNotSchedule":
                errs.append(
                    invalid(
                        mpath,
                        c.minDomains,
                        f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {c.whenUnsatisfiable}",
                    )
                )
        for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if c.HasField(name) and getattr(c, name) not in _NODE_INCLUSION_POLICIES:
                errs.append(not_supported(child(p, name), getattr(c, name), _NODE_INCLUSION_POLICIES))
        errs.extend(_validate_match_label_keys_in_topology_spread(child(p, "matchLabelKeys"), c))
        if c.HasField("labelSelector"):
            errs.extend(validate_label_selector(c.labelSelector, child(p, "labelSelector")))
    return errs


def _validate_match_label_keys_in_topology_spread(path: str, c: Any) -> ErrorList:
    """validateMatchLabelKeysInTopologySpread."""
    if not c.matchLabelKeys:
        return []
    errs: ErrorList = []
    selector_keys: set[str] = set()
    if c.HasField("labelSelector"):
        selector_keys.update(c.labelSelector.matchLabels)
        selector_keys.update(e.key for e in c.labelSelector.matchExpressions)
    else:
        errs.append(forbidden(path, "must not be specified when labelSelector is not set"))
    for i, k in enumerate(c.matchLabelKeys):
        errs.extend(validate_label_name(k, index(path, i)))
        if k in selector_keys:
            errs.append(invalid(index(path, i), k, "exists in both matchLabelKeys and labelSelector"))
    return errs


# ---------------------------------------------------------------- containers


def _validate_container_ports(ports: Any, path: str) -> ErrorList:
    """validateContainerPorts (an empty protocol is the default, TCP)."""
    errs: ErrorList = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        p = index(path, i)
        if port.name:
            if msgs := is_valid_port_name(port.name):
                errs.extend(invalid(child(p, "name"), port.name, m) for m in msgs)
            elif port.name in names:
                errs.append(duplicate(child(p, "name"), port.name))
            else:
                names.add(port.name)
        if port.containerPort == 0:
            errs.append(required(child(p, "containerPort")))
        else:
            errs.extend(
                invalid(child(p, "containerPort"), port.containerPort, m) for m in is_valid_port_num(port.containerPort)
            )
        if port.hostPort != 0:
            errs.extend(invalid(child(p, "hostPort"), port.hostPort, m) for m in is_valid_port_num(port.hostPort))
        if port.protocol and port.protocol not in _PORT_PROTOCOLS:
            errs.append(not_supported(child(p, "protocol"), port.protocol, _PORT_PROTOCOLS))
    return errs


def _check_host_port_conflicts(containers: Any, path: str) -> ErrorList:
    """AccumulateUniqueHostPorts over the given containers."""
    errs: ErrorList = []
    seen: set[str] = set()
    for ci, c in enumerate(containers):
        for pi, port in enumerate(c.ports):
            if port.hostPort == 0:
                continue
            ident = f"{port.protocol or 'TCP'}/{port.hostIP}/{port.hostPort}"
            if ident in seen:
                errs.append(duplicate(child(index(child(index(path, ci), "ports"), pi), "hostPort"), ident))
            else:
                seen.add(ident)
    return errs


def _check_set_fields(msg: Any, checks: dict[str, Any], path: str) -> ErrorList:
    """Runs checks[field](msg, value, path) for each field msg sets: unset fields cost nothing."""
    errs: ErrorList = []
    for fd, value in msg.ListFields():
        check = checks.get(fd.name)
        if check is not None:
            errs.extend(check(msg, value, path))
    return errs


def _container_image(c: Any, image: str, path: str) -> ErrorList:
    if image != image.strip():
        return [invalid(child(path, "image"), image, "must not have leading or trailing whitespace")]
    return []


def _container_enum(name: str, supported: tuple[str, ...]) -> Any:
    def check(c: Any, value: str, path: str) -> ErrorList:
        if value and value not in supported:
            return [not_supported(child(path, name), value, supported)]
        return []

    return check


# Container field -> check(container, value, container path), for the fields it sets.
_CONTAINER_CHECKS: dict[str, Any] = {
    "image": _container_image,
    "terminationMessagePolicy": _container_enum("terminationMessagePolicy", _TERMINATION_MESSAGE_POLICIES),
    "ports": lambda c, v, p: _validate_container_ports(v, child(p, "ports")),
    "imagePullPolicy": _container_enum("imagePullPolicy", _PULL_POLICIES),
    "resources": lambda c, v, p: validate_resource_requirements(v, child(p, "resources")),
}


def _validate_container_common(c: Any, path: str) -> ErrorList:
    """validateContainerCommon, for the fields a scheduler reads."""
    errs: ErrorList = []
    if not c.name:
        errs.append(required(child(path, "name")))
    elif msgs := _dns1123_label_errors(c.name):
        errs.extend(invalid(child(path, "name"), c.name, m) for m in msgs)
    if not c.image:
        errs.append(required(child(path, "image")))
    errs.extend(_check_set_fields(c, _CONTAINER_CHECKS, path))
    return errs


def _validate_containers(containers: Any, path: str) -> ErrorList:
    """validateContainers."""
    if not containers:
        return [required(path)]
    errs: ErrorList = []
    names: set[str] = set()
    for i, c in enumerate(containers):
        p = index(path, i)
        errs.extend(_validate_container_common(c, p))
        if c.name in names:
            errs.append(duplicate(child(p, "name"), c.name))
        else:
            names.add(c.name)
        if c.HasField("restartPolicy"):
            errs.append(forbidden(child(p, "restartPolicy"), "may not be set for non-init containers"))
    errs.extend(_check_host_port_conflicts(containers, path))
    return errs


def _validate_init_containers(inits: Any, regular: Any, path: str) -> ErrorList:
    """validateInitContainers."""
    errs: ErrorList = []
    names = {c.name for c in regular}
    for i, c in enumerate(inits):
        p = index(path, i)
        errs.extend(_validate_container_common(c, p))
        if c.HasField("restartPolicy") and c.restartPolicy != "Always":
            errs.append(not_supported(child(p, "restartPolicy"), c.restartPolicy, ("Always",)))
        if c.name in names:
            errs.append(duplicate(child(p, "name"), c.name))
        elif c.name:
            names.add(c.name)
        # init containers run one by one: their ports only conflict within one container
        errs.extend(_check_host_port_conflicts([c], path))
    return errs


def _validate_host_network_ports(spec: Any, path: str) -> ErrorList:
    """validatePodHostNetworkDeps for a Pod: hostPort must equal containerPort."""
    if not spec.hostNetwork:
        return []
    errs: ErrorList = []
    for i, c in enumerate(spec.containers):
        for j, port in enumerate(c.ports):
            if port.hostPort != port.containerPort:
                errs.append(
                    invalid(
                        child(index(child(index(child(path, "containers"), i), "ports"), j), "hostPort"),
                        port.hostPort,
                        "must match `containerPort` when `hostNetwork` is true",
                    )
                )
    return errs


# ---------------------------------------------------------------- pods


def _validate_overhead(overhead: Any, path: str) -> ErrorList:
    """validateOverhead: the requirements check on {limits: overhead} (so paths say `limits`)."""
    errs: ErrorList = []
    lim_path = child(path, "limits")
    for name, q in overhead.items():
        p = key(lim_path, name)
        errs.extend(validate_container_resource_name(name, p))
        errs.extend(validate_resource_quantity_value(name, q, p))
    return errs


def _spec_scheduling_gates(spec: Any, gates: Any, path: str) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        p = index(child(path, "schedulingGates"), i)
        errs.extend(invalid(p, gate.name, m) for m in is_qualified_name(gate.name))
        if gate.name in seen:
            errs.append(duplicate(p, gate.name))
        seen.add(gate.name)
    return errs


def _spec_enum(name: str, supported: tuple[str, ...]) -> Any:
    def check(spec: Any, value: str, path: str) -> ErrorList:
        if value and value not in supported:
            return [not_supported(child(path, name), value, supported)]
        return []

    return check


def _spec_name(name: str, fn: Any) -> Any:
    def check(spec: Any, value: str, path: str) -> ErrorList:
        return [invalid(child(path, name), value, m) for m in fn(value)] if value else []

    return check


def _spec_active_deadline(spec: Any, value: int, path: str) -> ErrorList:
    if 1 <= value <= _HIGHEST_USER_DEFINABLE_ACTIVE_DEADLINE:
        return []
    return [
        invalid(
            child(path, "activeDeadlineSeconds"),
            value,
            inclusive_range_error(1, _HIGHEST_USER_DEFINABLE_ACTIVE_DEADLINE),
        )
    ]


def _spec_os(spec: Any, value: Any, path: str) -> ErrorList:
    if not value.name:
        return [required(child(child(path, "os"), "name"), "cannot be empty")]
    if value.name not in _OS_NAMES:
        return [not_supported(child(path, "os"), value.name, _OS_NAMES)]
    return []


def _subdomain(value: str) -> list[str]:
    return name_is_dns_subdomain(value, False)


# PodSpec field -> check(spec, value, spec path): only the fields a pod sets are looked at.
_POD_SPEC_CHECKS: dict[str, Any] = {
    "initContainers": lambda spec, v, p: _validate_init_containers(v, spec.containers, child(p, "initContainers")),
    "resources": lambda spec, v, p: validate_resource_requirements(
        v, child(p, "resources"), _validate_pod_resource_name
    ),
    "hostNetwork": lambda spec, v, p: _validate_host_network_ports(spec, p),
    "restartPolicy": _spec_enum("restartPolicy", _RESTART_POLICIES),
    "dnsPolicy": _spec_enum("dnsPolicy", _DNS_POLICIES),
    "nodeSelector": lambda spec, v, p: validate_labels(v, child(p, "nodeSelector")),
    "affinity": lambda spec, v, p: validate_affinity(v, child(p, "affinity")),
    "schedulingGates": _spec_scheduling_gates,
    "topologySpreadConstraints": lambda spec, v, p: _validate_topology_spread_constraints(
        v, child(p, "topologySpreadConstraints")
    ),
    "serviceAccountName": _spec_name("serviceAccountName", _subdomain),
    "nodeName": _spec_name("nodeName", _subdomain),
    "activeDeadlineSeconds": _spec_active_deadline,
    "hostname": _spec_name("hostname", is_dns1123_label),
    "subdomain": _spec_name("subdomain", is_dns1123_label),
    "tolerations": lambda spec, v, p: validate_tolerations(v, child(p, "tolerations")),
    "priorityClassName": _spec_name("priorityClassName", _subdomain),
    "preemptionPolicy": lambda spec, v, p: validate_preemption_policy(v, child(p, "preemptionPolicy")),
    "overhead": lambda spec, v, p: _validate_overhead(v, child(p, "overhead")),
    "os": _spec_os,
}


def validate_pod_spec(spec: Any, path: str = "spec") -> ErrorList:
    """ValidatePodSpec, for what a scheduler reads (see the module docstring)."""
    errs = _validate_containers(spec.containers, child(path, "containers"))
    errs.extend(_check_set_fields(spec, _POD_SPEC_CHECKS, path))
    return errs


def validate_preemption_policy(policy: str, path: str) -> ErrorList:
    """ValidatePreemptionPolicy."""
    if not policy:
        return [required(path)]
    if policy not in _PREEMPTION_POLICIES:
        return [not_supported(path, policy, _PREEMPTION_POLICIES)]
    return []


def validate_pod_create(pod: Any) -> ErrorList:
    """ValidatePodCreate."""
    errs = validate_object_meta(pod.metadata, True, name_is_dns_subdomain)
    spec = pod.spec
    errs.extend(validate_pod_spec(spec))
    if spec.ephemeralContainers:
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.nodeName and spec.schedulingGates:
        errs.append(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    return errs


# ---------------------------------------------------------------- nodes and namespaces


def validate_node(node: Any) -> ErrorList:
    """ValidateNode: metadata, taints (kube reports them under `metadata.taints`), the quantities
    of status.capacity and status.allocatable, and status.declaredFeatures."""
    errs = validate_object_meta(node.metadata, False, name_is_dns_subdomain)
    if node.spec.taints:
        errs.extend(validate_node_taints(node.spec.taints, "metadata.taints"))
    for name, q in node.status.capacity.items():
        errs.extend(validate_resource_quantity_value(name, q, f"status.capacity.{name}"))
    for name, q in node.status.allocatable.items():
        errs.extend(validate_resource_quantity_value(name, q, f"status.allocatable.{name}"))
    errs.extend(validate_node_declared_features(node.status.declaredFeatures, "status.declaredFeatures"))
    return errs


def _node_declared_feature_name_error(name: str) -> str | None:
    """validateNodeDeclaredFeatureName."""
    if len(name.encode()) > _DNS1123_SUBDOMAIN_MAX_LENGTH:
        return f"invalid feature name {quote(name)}: must be no more than {_DNS1123_SUBDOMAIN_MAX_LENGTH} characters"
    if _NODE_DECLARED_FEATURE_RE.fullmatch(name) is None:
        return (f"invalid feature name {quote(name)}: must start with an UpperCamelCase segment, with subsequent "
                "segments separated by '/' (e.g., MyFeature or MyFeature/mySubFeature), and contain only "
                "alphanumeric characters and slashes")
    return None


def validate_node_declared_features(features: Any, path: str) -> ErrorList:
    """validateNodeDeclaredFeatures: valid names, sorted, without duplicates (the NodeDeclaredFeatures
    gate is GA in 1.37, so the field is never dropped)."""
    errs: ErrorList = []
    names = list(features)
    for i, name in enumerate(names):
        msg = _node_declared_feature_name_error(name)
        if msg is not None:
            errs.append(invalid(index(path, i), name, msg))
        if i + 1 < len(names):
            nxt = names[i + 1]
            if name == nxt:
                errs.append(duplicate(index(path, i + 1), nxt))
            elif name > nxt:
                errs.append(invalid(index(path, i + 1), nxt, "list must be sorted alphabetically"))
    return errs


def validate_namespace(ns: Any) -> ErrorList:
    """ValidateNamespace."""
    errs = validate_object_meta(ns.metadata, False, name_is_dns_label)
    for name in ns.spec.finalizers:
        p = "spec.finalizers"
        errs.extend(invalid(p, name, m) for m in is_qualified_name(name))
        if "/" not in name and name != "kubernetes":
            errs.append(invalid(p, name, "name is neither a standard finalizer name nor is it fully qualified"))
    return errs
