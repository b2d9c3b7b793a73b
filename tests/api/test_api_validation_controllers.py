"""API-server validation at load of the kinds DefaultSelector reads (Service, ReplicationController,
ReplicaSet, StatefulSet): their selectors and metadata, with kube's paths and messages, and the
defaults the API server applies first (an RC's selector from its template)."""

from __future__ import annotations

import pytest

from wasmsched.api.manifest import ManifestError, load_text

from .test_api_validation import QUALIFIED, SUBDOMAIN

TEMPLATE = "template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}"
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def invalid(api_version: str, kind: str, qualified: str, body: str, name: str = "x") -> str:
    """The part after `<Kind> "<name>" is invalid: ` of the load error."""
    text = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: {name}}}\n{body}\n"
    with pytest.raises(ManifestError) as exc:
        load_text(text, "x.yaml")
    msg = str(exc.value)
    prefix = f'x.yaml: document 1 ({kind} default/{name}): {qualified} "{name}" is invalid: '
    assert msg.startswith(prefix), msg
    return msg.removeprefix(prefix)


@pytest.mark.parametrize(
    ("spec", "selector"),
    [
        ("{replicas: 2, selector: {matchLabels: {app: web}}, " + TEMPLATE + "}", "app=web"),
        ("{selector: {matchExpressions: [{key: app, operator: In, values: [web, api]}]}, " + TEMPLATE + "}",
         "app in (api,web)"),
    ],
)
@pytest.mark.parametrize("kind", ["ReplicaSet", "StatefulSet"])
def test_valid_apps_controllers_load(kind: str, spec: str, selector: str) -> None:
    obj = load_text(f"apiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: web}}\nspec: {spec}\n").of_kind(kind)[0]
    assert obj.metadata.namespace == "default"  # type: ignore[attr-defined]
    assert obj.spec.HasField("replicas")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("{" + TEMPLATE + "}",
         "[spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: "
         "`selector` does not match template `labels`]"),
        ("{selector: {}, " + TEMPLATE + "}",
         "spec.selector: Invalid value: {}: empty selector is invalid for deployment"),
        ("{selector: {matchLabels: {app: api}}, " + TEMPLATE + "}",
         'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`'),
        ("{replicas: -1, selector: {matchLabels: {app: web}}, " + TEMPLATE + "}",
         "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        ("{selector: {matchExpressions: [{key: app, operator: In}]}, " + TEMPLATE + "}",
         "[spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
         "'NotIn', spec.selector: Invalid value: {\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\"}]}: "
         "invalid label selector]"),
        ("{selector: {matchLabels: {'a b': web}}, " + TEMPLATE + "}",
         f'[spec.selector.matchLabels: Invalid value: "a b": {QUALIFIED}, spec.selector: Invalid value: '
         '{"matchLabels":{"a b":"web"}}: invalid label selector]'),
    ],
)
def test_replica_set(spec: str, expected: str) -> None:
    assert invalid("apps/v1", "ReplicaSet", "ReplicaSet.apps", f"spec: {spec}") == expected


def test_replica_set_name_is_a_subdomain() -> None:
    body = "spec: {selector: {matchLabels: {app: web}}, " + TEMPLATE + "}"
    assert invalid("apps/v1", "ReplicaSet", "ReplicaSet.apps", body, "Web") == (
        f'metadata.name: Invalid value: "Web": {SUBDOMAIN}')


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("{selector: {}, " + TEMPLATE + "}",
         "spec.selector: Invalid value: {}: empty selector is invalid for statefulset"),
        ("{serviceName: a.b, selector: {matchLabels: {app: web}}, " + TEMPLATE + "}",
         'spec.serviceName: Invalid value: "a.b": must not contain dots'),
        ("{selector: {matchExpressions: [{key: app, operator: Exists, values: [x]}]}, " + TEMPLATE + "}",
         "[spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or "
         "'DoesNotExist', spec.selector: Invalid value: "
         '{"matchExpressions":[{"key":"app","operator":"Exists","values":["x"]}]}]'),  # no detail: kube's is ""
    ],
)
def test_stateful_set(spec: str, expected: str) -> None:
    assert invalid("apps/v1", "StatefulSet", "StatefulSet.apps", f"spec: {spec}") == expected


def test_stateful_set_name_is_a_label() -> None:
    body = "spec: {selector: {matchLabels: {app: web}}, " + TEMPLATE + "}"
    assert invalid("apps/v1", "StatefulSet", "StatefulSet.apps", body, "a.b") == (
        'metadata.name: Invalid value: "a.b": must not contain dots')


def test_replication_controller_defaults_selector_and_labels_from_template() -> None:
    rc = load_text("apiVersion: v1\nkind: ReplicationController\nmetadata: {name: web}\nspec: {" + TEMPLATE + "}\n"
                   ).of_kind("ReplicationController")[0]
    assert dict(rc.spec.selector) == {"app": "web"}  # type: ignore[attr-defined]
    assert dict(rc.metadata.labels) == {"app": "web"}  # type: ignore[attr-defined]
    assert rc.spec.replicas == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("{}", "[spec.selector: Required value, spec.template: Required value]"),
        ("{selector: {app: api}, " + TEMPLATE + "}",
         'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`'),
        ("{selector: {app: web}, replicas: -2, " + TEMPLATE + "}",
         "spec.replicas: Invalid value: -2: must be greater than or equal to 0"),
    ],
)
def test_replication_controller(spec: str, expected: str) -> None:
    assert invalid("v1", "ReplicationController", "ReplicationController", f"spec: {spec}") == expected


@pytest.mark.parametrize(
    ("body", "name", "expected"),
    [
        ("spec: {selector: {'a b': x}}", "svc", f'spec.selector: Invalid value: "a b": {QUALIFIED}'),
        ("spec: {selector: {app: web}}", "1svc", f'metadata.name: Invalid value: "1svc": {DNS1035}'),
    ],
)
def test_service(body: str, name: str, expected: str) -> None:
    assert invalid("v1", "Service", "Service", body, name) == expected


def test_lists_of_controllers_load() -> None:
    text = ("apiVersion: apps/v1\nkind: ReplicaSetList\nitems:\n- metadata: {name: a}\n  spec: {selector: "
            "{matchLabels: {app: web}}, " + TEMPLATE + "}\n")
    assert [o.metadata.name for o in load_text(text).of_kind("ReplicaSet")] == ["a"]  # type: ignore[attr-defined]
