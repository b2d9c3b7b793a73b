"""GroupVersionResource (k8s.io/apimachinery/pkg/runtime/schema) and the kind -> resource mapping that
watched kinds need (docs/abi.md §14.2): what a plugin names in `args.watch`, and how the objects of a
manifest are matched to it.

A resource is named three ways: as a plugin declares it (group, version, resource), as REST paths have it
(`/api/v1/<resource>`, `/apis/<group>/<version>/<resource>`), and as kube-scheduler names the cluster events
of a resource it watches through a dynamic informer, `<resource>.<version>.<group>` (eventhandlers.go
`addAllEventHandlers`, parsed back with `schema.ParseResourceArg`).
"""

from __future__ import annotations

from dataclasses import dataclass

# meta.unpluralizedSuffixes (apimachinery/pkg/api/meta/restmapper.go)
_UNPLURALIZED_SUFFIXES = ("endpoints",)


@dataclass(frozen=True, slots=True, order=True)
class GroupVersionResource:
    group: str  # "" is the core group
    version: str
    resource: str  # the plural, lower case: "namespaces", "noderesourcetopologies"

    @property
    def group_version(self) -> str:
        """The apiVersion of the resource's objects: "v1", "topology.node.k8s.io/v1alpha2"."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def event_resource(self) -> str:
        """The resource of its cluster events, as kube-scheduler names a dynamically watched resource:
        `<resource>.<version>.<group>` ("noderesourcetopologies.v1alpha2.topology.node.k8s.io",
        "namespaces.v1." for the core group, which `schema.ParseResourceArg` reads back the same)."""
        return f"{self.resource}.{self.version}.{self.group}"

    @property
    def group_resource(self) -> str:
        """As API errors and RBAC name it: "namespaces", "noderesourcetopologies.topology.node.k8s.io"."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def path(self, namespace: str = "", name: str = "") -> str:
        """The collection's (or with a name, the object's) REST path, in one namespace or in all."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [base]
        if namespace:
            parts.append(f"namespaces/{namespace}")
        parts.append(self.resource)
        if name:
            parts.append(name)
        return "/".join(parts)

    def __str__(self) -> str:
        return self.event_resource


def parse_resource_arg(arg: str) -> GroupVersionResource | None:
    """schema.ParseResourceArg's GroupVersionResource: `<resource>.<version>.<group>` (at least two dots;
    the group may hold more), None for fewer."""
    if arg.count(".") < 2:
        return None
    resource, version, group = arg.split(".", 2)
    return GroupVersionResource(group, version, resource)


def split_api_version(api_version: str) -> tuple[str, str]:
    """(group, version) of an apiVersion: "v1" -> ("", "v1"), "apps/v1" -> ("apps", "v1")."""
    group, _, version = api_version.rpartition("/")
    return group, version


def unsafe_guess_kind_to_resource(kind: str) -> tuple[str, str]:
    """meta.UnsafeGuessKindToResource's (plural, singular) resource of a kind: lower case, then "es" after
    a final "s", "ies" for a final "y", "s" otherwise; a kind ending in "endpoints" stays as it is.
    ("", "") for an empty kind."""
    if not kind:
        return "", ""
    singular = kind.lower()
    for skip in _UNPLURALIZED_SUFFIXES:
        if singular.endswith(skip):
            return singular, singular
    last = singular[-1]
    if last == "s":
        return singular + "es", singular
    if last == "y":
        return singular[:-1] + "ies", singular
    return singular + "s", singular
