"""API-server validation at load of the kinds DefaultSelector reads (Service, ReplicationController,
ReplicaSet, StatefulSet): their selectors and metadata, with kube's paths and messages, and the
defaults the API server applies first (an RC's selector from its template)."""

from __future__ import annotations

import pytest

from wasmsched.api.manifest import ManifestError, load_text

from .test_api_validation import QUALIFIED, SUBDOMAIN

TEMPLATE = "template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}"
VALID_SPEC = "{selector: {matchLabels: {app: web}}, " + TEMPLATE + "}"


def manifest(api_version: str, kind: str, body: str, name: str = "x") -> str:
    return f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: {name}}}\n{body}\n"


def invalid(api_version: str, kind: str, qualified: str, body: str, name: str = "x") -> str:
    """The part after `<Kind> "<name>" is invalid: ` of the load error."""
    text = manifest(api_version, kind, body, name)
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


RS_SPECS = [
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
]


@pytest.mark.parametrize(("spec", "expected"), RS_SPECS)
def test_replica_set(spec: str, expected: str) -> None:
    assert invalid("apps/v1", "ReplicaSet", "ReplicaSet.apps", f"spec: {spec}") == expected


def test_replica_set_name_is_a_subdomain() -> None:
    body = f"spec: {VALID_SPEC}"
    assert invalid("apps/v1", "ReplicaSet", "ReplicaSet.apps", body, "Web") == (
        f'metadata.name: Invalid value: "Web": {SUBDOMAIN}')


SS_SPECS = [
        ("{selector: {}, " + TEMPLATE + "}",
         "spec.selector: Invalid value: {}: empty selector is invalid for statefulset"),
        ("{serviceName: a.b, selector: {matchLabels: {app: web}}, " + TEMPLATE + "}",
         'spec.serviceName: Invalid value: "a.b": must not contain dots'),
        ("{selector: {matchExpressions: [{key: app, operator: Exists, values: [x]}]}, " + TEMPLATE + "}",
         "[spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or "
         "'DoesNotExist', spec.selector: Invalid value: "
         '{"matchExpressions":[{"key":"app","operator":"Exists","values":["x"]}]}]'),  # no detail: kube's is ""
]


@pytest.mark.parametrize(("spec", "expected"), SS_SPECS)
def test_stateful_set(spec: str, expected: str) -> None:
    assert invalid("apps/v1", "StatefulSet", "StatefulSet.apps", f"spec: {spec}") == expected


def test_stateful_set_name_is_a_label() -> None:
    body = f"spec: {VALID_SPEC}"
    assert invalid("apps/v1", "StatefulSet", "StatefulSet.apps", body, "a.b") == (
        'metadata.name: Invalid value: "a.b": must not contain dots')


def test_replication_controller_defaults_selector_and_labels_from_template() -> None:
    rc = load_text("apiVersion: v1\nkind: ReplicationController\nmetadata: {name: web}\nspec: {" + TEMPLATE + "}\n"
                   ).of_kind("ReplicationController")[0]
    assert dict(rc.spec.selector) == {"app": "web"}  # type: ignore[attr-defined]
    assert dict(rc.metadata.labels) == {"app": "web"}  # type: ignore[attr-defined]
    assert rc.spec.replicas == 1  # type: ignore[attr-defined]


RC_SPECS = [
        ("{}", "[spec.selector: Required value, spec.template: Required value]"),
        ("{selector: {app: api}, " + TEMPLATE + "}",
         'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`'),
        ("{selector: {app: web}, replicas: -2, " + TEMPLATE + "}",
         "spec.replicas: Invalid value: -2: must be greater than or equal to 0"),
]


@pytest.mark.parametrize(("spec", "expected"), RC_SPECS)
def test_replication_controller(spec: str, expected: str) -> None:
    assert invalid("v1", "ReplicationController", "ReplicationController", f"spec: {spec}") == expected


SERVICES = [
    ("spec: {selector: {'a b': x}, ports: [{port: 80}]}", "svc", f'spec.selector: Invalid value: "a b": {QUALIFIED}'),
    ("spec: {selector: {app: web}, ports: [{port: 80}]}", "a.b",
     'metadata.name: Invalid value: "a.b": must not contain dots'),
]


@pytest.mark.parametrize(("body", "name", "expected"), SERVICES)
def test_service(body: str, name: str, expected: str) -> None:
    assert invalid("v1", "Service", "Service", body, name) == expected


def test_lists_of_controllers_load() -> None:
    text = ("apiVersion: apps/v1\nkind: ReplicaSetList\nitems:\n- metadata: {name: a}\n  spec: {selector: "
            "{matchLabels: {app: web}}, " + TEMPLATE + "}\n")
    assert [o.metadata.name for o in load_text(text).of_kind("ReplicaSet")] == ["a"]  # type: ignore[attr-defined]


def controller_manifests() -> tuple[dict[str, str], dict[str, str]]:
    """(invalid, valid) manifests of the cases above, by case id: tests/kube/test_validation_parity.py
    sends them to a real API server, which must refuse exactly the invalid ones."""
    bad = {f"replica-set-{i}": manifest("apps/v1", "ReplicaSet", f"spec: {s}") for i, (s, _) in enumerate(RS_SPECS)}
    bad |= {f"stateful-set-{i}": manifest("apps/v1", "StatefulSet", f"spec: {s}") for i, (s, _) in enumerate(SS_SPECS)}
    bad |= {f"replication-controller-{i}": manifest("v1", "ReplicationController", f"spec: {s}")
            for i, (s, _) in enumerate(RC_SPECS)}
    bad |= {f"service-{i}": manifest("v1", "Service", body, name) for i, (body, name, _) in enumerate(SERVICES)}
    bad["replica-set-name"] = manifest("apps/v1", "ReplicaSet", f"spec: {VALID_SPEC}", "Web")
    bad["stateful-set-name"] = manifest("apps/v1", "StatefulSet", f"spec: {VALID_SPEC}", "a.b")
    good = {
        "replica-set": manifest("apps/v1", "ReplicaSet", f"spec: {VALID_SPEC}"),
        "stateful-set": manifest("apps/v1", "StatefulSet", f"spec: {VALID_SPEC}"),
        "replication-controller": manifest("v1", "ReplicationController", "spec: {" + TEMPLATE + "}"),
        "service": manifest("v1", "Service", "spec: {selector: {app: web}, ports: [{port: 80}]}"),
        # A DNS-1123 label that is no DNS-1035 label: valid since RelaxedServiceNameValidation (GA in 1.37).
        "service-name-starting-with-a-digit": manifest("v1", "Service", "spec: {ports: [{port: 80}]}", "1svc"),
    }
    return bad, good


def test_controller_manifests_are_refused_or_loaded() -> None:
    bad, good = controller_manifests()
    for text in bad.values():
        with pytest.raises(ManifestError):
            load_text(text)
    for text in good.values():
        assert len(load_text(text).objects) == 1
