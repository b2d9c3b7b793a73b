"""The API access `wasmsched run` needs, as data, and RBAC's rule matching to check a set of rules grants it.

deploy/ grants it (tests/kube/test_deploy.py checks that, with the bootstrap `system:kube-scheduler` and
`system:volume-scheduler` roles as a real API server reports them); a start-up self-check could use the
same list. Matching follows k8s.io/kubernetes/pkg/apis/rbac/v1/evaluation_helpers.go (RuleAllows).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wasmsched.api.gvr import GroupVersionResource

READ = ("get", "list", "watch")


@dataclass(frozen=True)
class Access:
    """One request kind: a verb on a resource (and subresource) of an API group ("" is the core group).

    `namespace` is where the request goes ("" for every namespace or a cluster-scoped resource); `name`
    is the object's name when the request names one, so a rule with resourceNames can allow it.
    """

    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    def __str__(self) -> str:
        res = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f" in namespace {self.namespace}" if self.namespace else ""
        named = f" named {self.name}" if self.name else ""
        return f"{self.verb} {res}.{self.group or 'core'}{named}{where}"


# (group, resource) of every object the informers list and watch: what the framework, the in-tree plugins
# and DefaultSelector read (wasmsched/api/kinds.py RESOURCES).
READ_RESOURCES: tuple[tuple[str, str], ...] = (
    ("", "namespaces"),
    ("scheduling.k8s.io", "priorityclasses"),
    ("", "nodes"),
    ("policy", "poddisruptionbudgets"),
    ("storage.k8s.io", "storageclasses"),
    ("storage.k8s.io", "csinodes"),
    ("storage.k8s.io", "csidrivers"),
    ("storage.k8s.io", "csistoragecapacities"),
    ("storage.k8s.io", "volumeattachments"),
    ("resource.k8s.io", "deviceclasses"),
    ("resource.k8s.io", "resourceslices"),
    ("resource.k8s.io", "resourceclaims"),
    ("", "persistentvolumes"),
    ("", "persistentvolumeclaims"),
    ("", "services"),
    ("", "replicationcontrollers"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("", "pods"),
)

SCHEDULER_ACCESS: tuple[Access, ...] = (
    *(Access(verb, group, resource) for group, resource in READ_RESOURCES for verb in READ),
    # DefaultBinder
    Access("create", "", "pods", "binding"),
    # PodScheduled condition, nominatedNodeName, DisruptionTarget of victims
    Access("patch", "", "pods", "status"),
    # preemption's victims
    Access("delete", "", "pods"),
    # VolumeBinding's PreBind: a PV's claimRef, a claim's selected-node annotation
    Access("update", "", "persistentvolumes"),
    Access("update", "", "persistentvolumeclaims"),
    # DynamicResources' PreBind: the claim's allocation and reservedFor
    Access("update", "resource.k8s.io", "resourceclaims", "status"),
    # the event recorder: events.k8s.io/v1 Events, created then patched when they repeat
    Access("create", "events.k8s.io", "events"),
    Access("patch", "events.k8s.io", "events"),
    # delegated authentication and authorization of /metrics (and of the health endpoints' callers)
    Access("create", "authentication.k8s.io", "tokenreviews"),
    Access("create", "authorization.k8s.io", "subjectaccessreviews"),
)


def lease_access(namespace: str, name: str) -> tuple[Access, ...]:
    """Leader election on the Lease namespace/name: get and update it by name, create it (a create names
    no object in its URL, so a rule with resourceNames cannot allow it)."""
    return (
        Access("get", "coordination.k8s.io", "leases", namespace=namespace, name=name),
        Access("update", "coordination.k8s.io", "leases", namespace=namespace, name=name),
        Access("create", "coordination.k8s.io", "leases", namespace=namespace),
    )


def watched_access(watch: Iterable[GroupVersionResource]) -> tuple[Access, ...]:
    """The resources plugins declare they watch (args.watch, docs/abi.md §14.2): each listed and watched in
    every namespace by its dynamic informer (docs/deploy.md section 4.1 grants them)."""
    return tuple(Access(verb, gvr.group, gvr.resource) for gvr in watch for verb in ("list", "watch"))


def scheduler_access(lease_namespace: str = "kube-system", lease_name: str = "kube-scheduler",
                     watch: Iterable[GroupVersionResource] = ()) -> tuple[Access, ...]:
    """Everything `wasmsched run` requests, with leader election on the given Lease and the plugins'
    watched resources."""
    return SCHEDULER_ACCESS + lease_access(lease_namespace, lease_name) + watched_access(watch)


@dataclass(frozen=True)
class Rule:
    """An rbac/v1 PolicyRule's resource part (nonResourceURLs play no part here)."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    resource_names: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, rule: Mapping[str, Any]) -> Rule:
        """From a PolicyRule as JSON/YAML gives it (camelCase keys; absent lists are empty)."""
        return cls(tuple(rule.get("verbs") or ()), tuple(rule.get("apiGroups") or ()),
                   tuple(rule.get("resources") or ()), tuple(rule.get("resourceNames") or ()))

    def allows(self, a: Access) -> bool:
        """RuleAllows: verb, group, resource (or "*", "*/sub", "res/*") and, when it lists names, the name."""
        if not _has(self.verbs, a.verb) or not _has(self.api_groups, a.group):
            return False
        if not _resource_matches(self.resources, a.resource, a.subresource):
            return False
        return not self.resource_names or a.name in self.resource_names


def _has(values: Sequence[str], want: str) -> bool:
    return "*" in values or want in values


def _resource_matches(resources: Sequence[str], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for r in resources:
        if r in ("*", combined):
            return True
        if subresource and (r == f"*/{subresource}" or r == f"{resource}/*"):
            return True
    return False


@dataclass(frozen=True)
class Grant:
    """Rules a subject holds, and where: everywhere (a ClusterRoleBinding) or in one namespace (a
    RoleBinding, to a Role or a ClusterRole)."""

    rules: tuple[Rule, ...]
    namespace: str = ""

    def allows(self, a: Access) -> bool:
        if self.namespace and a.namespace != self.namespace:
            return False
        return any(r.allows(a) for r in self.rules)


def missing(grants: Iterable[Grant], wanted: Iterable[Access]) -> list[Access]:
    """The accesses no grant allows (RBAC only adds permissions: one allowing grant is enough)."""
    gs = list(grants)
    return [a for a in wanted if not any(g.allows(a) for g in gs)]


def service_account_grants(namespace: str, name: str, objects: Iterable[Mapping[str, Any]],
                           cluster_roles: Mapping[str, Sequence[Rule]]) -> list[Grant]:
    """The grants of ServiceAccount namespace/name by the (Cluster)RoleBindings among objects (manifests as
    dicts), with the rules of the Roles and ClusterRoles among objects, plus `cluster_roles` (roles the
    objects bind but do not define, e.g. the bootstrap roles as the API server reports them). A binding to
    a role found nowhere grants nothing, as RBAC ignores it."""
    objs = list(objects)
    roles: dict[tuple[str, str], tuple[Rule, ...]] = {}
    cluster = {k: tuple(v) for k, v in cluster_roles.items()}
    for o in objs:
        meta = o.get("metadata") or {}
        rules = tuple(Rule.from_dict(r) for r in o.get("rules") or ())
        if o.get("kind") == "ClusterRole":
            cluster[meta.get("name", "")] = rules
        elif o.get("kind") == "Role":
            roles[(meta.get("namespace", ""), meta.get("name", ""))] = rules
    grants: list[Grant] = []
    for o in objs:
        kind = o.get("kind")
        if kind not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        bound_in = "" if kind == "ClusterRoleBinding" else (o.get("metadata") or {}).get("namespace", "")
        if not _binds(o, bound_in, namespace, name):
            continue
        ref = o.get("roleRef") or {}
        if ref.get("kind") == "ClusterRole":
            rules = cluster.get(ref.get("name", ""), ())
        else:
            rules = roles.get((bound_in, ref.get("name", "")), ())
        grants.append(Grant(rules, bound_in))
    return grants


def _binds(binding: Mapping[str, Any], binding_namespace: str, namespace: str, name: str) -> bool:
    # A RoleBinding's ServiceAccount subject without a namespace is in the binding's own.
    return any(s.get("kind") == "ServiceAccount" and s.get("name") == name
               and (s.get("namespace") or binding_namespace) == namespace
               for s in binding.get("subjects") or ())
