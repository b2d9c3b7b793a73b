"""API-server validation at load: objects kube-apiserver would reject are bad input, with its field
paths and messages (pkg/apis/core/validation, policy, scheduling, apimachinery ObjectMeta)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from wasmsched.api.manifest import ManifestError, load_paths, load_text

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
QUALIFIED = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
EFFECTS = 'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'


def pod(spec: str, meta: str = "name: p1") -> str:
    return f"apiVersion: v1\nkind: Pod\nmetadata: {{{meta}}}\nspec:\n{spec}"


C = "  containers: [{name: c, image: nginx}]\n"


def pod_error(text: str) -> str:
    with pytest.raises(ManifestError) as exc:
        load_text(text, "x.yaml")
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def pod_invalid(spec: str, meta: str = "name: p1") -> str:
    """The part after `Pod "p1" is invalid: `."""
    return pod_text_invalid(pod(spec, meta))


def pod_text_invalid(text: str) -> str:
    """The part after `Pod "p1" is invalid: ` of the error that loading `text` gives."""
    msg = pod_error(text)
    prefix = 'x.yaml: document 1 (Pod default/p1): Pod "p1" is invalid: '
    assert msg.startswith(prefix), msg
    return msg.removeprefix(prefix)


def term(selector: str) -> str:
    return (
        C + "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"      - topologyKey: zone\n        labelSelector: {selector}\n"
    )


TERM = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector"


# ---------------------------------------------------------------- 11. resources


NEGATIVE_CPU = pod("  containers: [{name: c, image: nginx, resources: {requests: {cpu: '-10'}}}]\n")


def test_negative_cpu_request() -> None:
    # accepted before: five 1-CPU pods then fit on one 1-CPU node next to it
    assert pod_error(NEGATIVE_CPU) == (
        'x.yaml: document 1 (Pod default/p1): Pod "p1" is invalid: spec.containers[0].resources.requests[cpu]: '
        'Invalid value: "-10": must be greater than or equal to 0'
    )


REQUESTS_ABOVE_LIMITS = pod(
    "  containers: [{name: c, image: nginx, resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}}]\n")


def test_requests_above_limits() -> None:
    assert pod_text_invalid(REQUESTS_ABOVE_LIMITS) == (
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'
    )


CONTAINER_RESOURCES: list[tuple[str, str]] = [
        (
            "{requests: {example.com/gpu: '1'}}",
            "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
        ),
        (
            "{requests: {example.com/gpu: '1'}, limits: {example.com/gpu: '2'}}",
            'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2',
        ),
        (
            "{limits: {example.com/gpu: 500m}}",
            'spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "500m": must be an integer',
        ),
        (
            "{requests: {gpu: '1'}}",
            ('[spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or '
            'fully qualified, spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard '
            "resource for containers]"),
        ),
        (
            "{requests: {pods: '1'}}",
            ('spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for '
            "containers"),
        ),
]


def resources_pod(resources: str) -> str:
    return pod(f"  containers: [{{name: c, image: nginx, resources: {resources}}}]\n")


@pytest.mark.parametrize(("resources", "expected"), CONTAINER_RESOURCES)
def test_container_resources(resources: str, expected: str) -> None:
    assert pod_text_invalid(resources_pod(resources)) == expected


NODE_QUANTITIES = (
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {capacity: {cpu: '-1'}, allocatable: {pods: 1.5}}\n"
)


def test_node_quantities() -> None:
    assert pod_error(NODE_QUANTITIES) == (
        'x.yaml: document 1 (Node n1): Node "n1" is invalid: [status.capacity.cpu: Invalid value: "-1": must be '
        'greater than or equal to 0, status.allocatable.pods: Invalid value: "1500m": must be an integer]'
    )


@pytest.mark.parametrize("where", ["allocatable", "capacity"])
def test_null_quantity_is_zero(where: str) -> None:
    # kube's JSON decoder hands null to Quantity.UnmarshalJSON: the entry is there, with value 0
    node = load_text(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nstatus: {{{where}: {{cpu: null, memory: 1Gi}}}}\n"
    ).of_kind("Node")[0]
    quantities = getattr(node.status, where)  # type: ignore[attr-defined]
    assert {k: v.string for k, v in quantities.items()} == {"cpu": "0", "memory": "1Gi"}
    p = load_text(pod("  containers: [{name: c, image: nginx, resources: {requests: {cpu: null}}}]\n"))
    assert p.of_kind("Pod")[0].spec.containers[0].resources.requests["cpu"].string == "0"  # type: ignore[attr-defined]


# ---------------------------------------------------------------- 5. selectors of affinity terms


POD_AFFINITY_SELECTORS: list[tuple[str, str]] = [
        (
            "{matchExpressions: [{key: app, operator: Bogus, values: [x]}]}",
            f'{TERM}.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator',
        ),
        (
            "{matchExpressions: [{key: app, operator: Exists, values: [x]}]}",
            (f"{TERM}.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or "
            "'DoesNotExist'"),
        ),
        (
            "{matchExpressions: [{key: app, operator: In}]}",
            f"{TERM}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            "{matchExpressions: [{key: a b, operator: Exists}]}",
            f'{TERM}.matchExpressions[0].key: Invalid value: "a b": {QUALIFIED}',
        ),
        ("{matchLabels: {a b: x}}", f'{TERM}.matchLabels: Invalid value: "a b": {QUALIFIED}'),
]


@pytest.mark.parametrize(("selector", "expected"), POD_AFFINITY_SELECTORS)
def test_pod_affinity_selector(selector: str, expected: str) -> None:
    assert pod_invalid(term(selector)) == expected


ANTI_AFFINITY = pod(
    C + "  affinity:\n    podAntiAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
    "      - weight: 0\n        podAffinityTerm:\n          topologyKey: ''\n"
    "          namespaceSelector: {matchExpressions: [{key: k, operator: Bogus}]}\n"
)


def test_anti_affinity_namespace_selector_and_weights() -> None:
    p = "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
    assert pod_text_invalid(ANTI_AFFINITY) == (
        f"[{p}.weight: Invalid value: 0: must be in the range 1-100, "
        f'{p}.podAffinityTerm.namespaceSelector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid '
        f"selector operator, {p}.podAffinityTerm.topologyKey: Required value: can not be empty, "
        f'{p}.podAffinityTerm.topologyKey: Invalid value: "": name part must be non-empty, '
        f'{p}.podAffinityTerm.topologyKey: Invalid value: "": {QUALIFIED}]'
    )


SPREAD_SELECTOR = pod(
    C + "  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
    " labelSelector: {matchExpressions: [{key: app, operator: Bogus}]}}\n"
)


def test_topology_spread_selector_is_checked_at_load() -> None:
    # a per-pod Error at scheduling time before; the API server refuses the pod
    assert pod_text_invalid(SPREAD_SELECTOR) == (
        'spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator: Invalid value: "Bogus": '
        "not a valid selector operator"
    )


SPREAD_CONSTRAINTS: list[tuple[str, str]] = [
        (
            "{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}",
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        ),
        (
            "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}",
            ("spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if "
            "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"),
        ),
        (
            "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 0}",
            "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than zero",
        ),
        (
            "{maxSkew: 1, whenUnsatisfiable: Maybe}",
            ("[spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty, "
            'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: '
            '"DoNotSchedule", "ScheduleAnyway"]'),
        ),
        (
            "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, nodeAffinityPolicy: Always}",
            ('spec.topologySpreadConstraints[0].nodeAffinityPolicy: Unsupported value: "Always": supported values: '
            '"Honor", "Ignore"'),
        ),
        (
            "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [app]}",
            ("spec.topologySpreadConstraints[0].matchLabelKeys: Forbidden: must not be specified when labelSelector "
            "is not set"),
        ),
]


def spread_pod(constraint: str) -> str:
    return pod(C + f"  topologySpreadConstraints: [{constraint}]\n")


@pytest.mark.parametrize(("constraint", "expected"), SPREAD_CONSTRAINTS)
def test_topology_spread_constraints(constraint: str, expected: str) -> None:
    assert pod_text_invalid(spread_pod(constraint)) == expected


# ---------------------------------------------------------------- node affinity, tolerations, taints

NA = (
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    ".nodeSelectorTerms[0].matchExpressions[0]"
)


NODE_AFFINITY_REQUIREMENTS: list[tuple[str, str]] = [
        ("{key: a, operator: Bogus}", f'{NA}.operator: Invalid value: "Bogus": not a valid selector operator'),
        (
            "{key: a, operator: In}",
            f"{NA}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            "{key: a, operator: DoesNotExist, values: [x]}",
            f"{NA}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        (
            "{key: a, operator: Gt, values: ['1', '2']}",
            f"{NA}.values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        ),
]


def node_affinity_pod(expr: str) -> str:
    return pod(
        C + "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"        nodeSelectorTerms: [{{matchExpressions: [{expr}]}}]\n"
    )


@pytest.mark.parametrize(("expr", "expected"), NODE_AFFINITY_REQUIREMENTS)
def test_node_affinity_requirements(expr: str, expected: str) -> None:
    assert pod_text_invalid(node_affinity_pod(expr)) == expected


TOLERATIONS: list[tuple[str, str]] = [
        (
            "{key: k, operator: Exists, value: v}",
            "spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
        ),
        (
            "{key: k, operator: Bogus}",
            'spec.tolerations[0].operator: Unsupported value: "Bogus": supported values: "Equal", "Exists", "Lt", "Gt"',
        ),
        ("{key: k, value: v, effect: Bogus}", f'spec.tolerations[0].effect: Unsupported value: "Bogus": {EFFECTS}'),
        (
            "{operator: Equal, value: v}",
            ('spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
            'which means "match all values and all keys"'),
        ),
        (
            "{key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}",
            ("spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
            "`tolerationSeconds` is set"),
        ),
]


def toleration_pod(toleration: str) -> str:
    return pod(C + f"  tolerations: [{toleration}]\n")


@pytest.mark.parametrize(("toleration", "expected"), TOLERATIONS)
def test_tolerations(toleration: str, expected: str) -> None:
    assert pod_text_invalid(toleration_pod(toleration)) == expected


NODE_TAINTS = (
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "spec: {taints: [{key: a, effect: Bogus}, {key: b}, {key: c, effect: NoSchedule},"
    " {key: c, effect: NoSchedule}]}\n"
)


def test_node_taints() -> None:
    assert pod_error(NODE_TAINTS) == (
        'x.yaml: document 1 (Node n1): Node "n1" is invalid: [metadata.taints[0].effect: Unsupported value: "Bogus": '
        f"{EFFECTS}, metadata.taints[1].effect: Required value, metadata.taints[3]: Duplicate value: "
        '{"Key":"c","Value":"","Effect":"NoSchedule","TimeAdded":null}: taints must be unique by key and effect pair]'
    )


# ---------------------------------------------------------------- metadata, containers, ports


OBJECT_META: list[tuple[str, str]] = [
        ("name: A_B", f'metadata.name: Invalid value: "A_B": {SUBDOMAIN}'),
        ("name: p1, namespace: Team_A", f'metadata.namespace: Invalid value: "Team_A": {LABEL}'),
        ("name: p1, labels: {a b: x}", f'metadata.labels: Invalid value: "a b": {QUALIFIED}'),
        (
            "name: p1, labels: {app: -x-}",
            ('metadata.labels: Invalid value: "-x-": a valid label must be an empty string or consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
            "or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
        ),
        ("name: p1, annotations: {a b: x}", f'metadata.annotations: Invalid value: "a b": {QUALIFIED}'),
]


@pytest.mark.parametrize(("meta", "expected"), OBJECT_META)
def test_object_meta(meta: str, expected: str) -> None:
    msg = pod_error(pod(C, meta))
    assert msg.endswith(" is invalid: " + expected), msg


BIG_ANNOTATIONS = pod(C, f"name: p1, annotations: {{a: {'x' * (256 * 1024)}}}")


def test_annotations_total_size() -> None:
    assert pod_text_invalid(BIG_ANNOTATIONS) == (
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    )


GENERATE_NAME = pod(C, "generateName: Web_")


def test_generate_name_is_validated() -> None:
    msg = pod_error(GENERATE_NAME)
    assert ': Invalid value: "Web_": ' in msg and "metadata.generateName" in msg


CONTAINERS: list[tuple[str, str]] = [
        ("[]", "spec.containers: Required value"),
        ("[{name: c, image: x}, {name: c, image: y}]", 'spec.containers[1].name: Duplicate value: "c"'),
        ("[{name: C_1, image: x}]", f'spec.containers[0].name: Invalid value: "C_1": {LABEL}'),
        ("[{name: c}]", "spec.containers[0].image: Required value"),
        (
            "[{name: c, image: x, ports: [{containerPort: 80, hostPort: 70000}]}]",
            "spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        (
            ("[{name: a, image: x, ports: [{containerPort: 80, hostPort: 80}]}, "
            "{name: b, image: x, ports: [{containerPort: 81, hostPort: 80}]}]"),
            'spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//80"',
        ),
        (
            "[{name: c, image: x, ports: [{containerPort: 80, protocol: HTTP}]}]",
            'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        ),
]


def containers_pod(containers: str) -> str:
    return pod(f"  containers: {containers}\n")


@pytest.mark.parametrize(("containers", "expected"), CONTAINERS)
def test_containers(containers: str, expected: str) -> None:
    assert pod_text_invalid(containers_pod(containers)) == expected


PRIORITY_NAME_AND_GATES = pod(
    C + "  priorityClassName: High_Priority\n  nodeName: n1\n  schedulingGates: [{name: g}]\n")


def test_priority_class_name_format_and_scheduling_gates() -> None:
    assert pod_text_invalid(PRIORITY_NAME_AND_GATES) == (
        f'[spec.priorityClassName: Invalid value: "High_Priority": {SUBDOMAIN}, '
        "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared]"
    )


# ---------------------------------------------------------------- PDBs, PriorityClasses, Namespaces


PDB_SPECS: list[tuple[str, str]] = [
        (
            "{minAvailable: 1, maxUnavailable: 1}",
            ('spec: Invalid value: {"MinAvailable":1,"Selector":null,"MaxUnavailable":1,'
            '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set'),
        ),
        ("{minAvailable: -1}", "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
        ("{maxUnavailable: 150%}", 'spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%'),
        (
            "{minAvailable: half}",
            ("spec.minAvailable: Invalid value: \"half\": a valid percent string must be a numeric string followed by "
            "an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"),
        ),
]


def pdb(spec: str) -> str:
    return f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: b}}\nspec: {spec}\n"


@pytest.mark.parametrize(("spec", "expected"), PDB_SPECS)
def test_pod_disruption_budget(spec: str, expected: str) -> None:
    assert pod_error(pdb(spec)) == (
        f'x.yaml: document 1 (PodDisruptionBudget default/b): PodDisruptionBudget.policy "b" is invalid: {expected}'
    )


PRIORITY_CLASSES: list[tuple[str, str]] = [
        (
            "metadata: {name: huge}\nvalue: 1000000001",
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        ),
        (
            "metadata: {name: system-mine}\nvalue: 5",
            ("metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
            "error: system-mine is not a known system priority class"),
        ),
        (
            "metadata: {name: p}\nvalue: 5\npreemptionPolicy: Sometimes",
            'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
        ),
]


def priority_class(body: str) -> str:
    return f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n{body}\n"


@pytest.mark.parametrize(("body", "expected"), PRIORITY_CLASSES)
def test_priority_class(body: str, expected: str) -> None:
    msg = pod_error(priority_class(body))
    assert msg.endswith(" is invalid: " + expected), msg
    assert 'PriorityClass.scheduling.k8s.io "' in msg


def test_second_global_default_priority_class(tmp_path: Path) -> None:
    pc = (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
        "metadata: {{name: {}}}\nvalue: {}\nglobalDefault: true\n"
    )
    (tmp_path / "a.yaml").write_text(pc.format("first", 10))
    (tmp_path / "b.yaml").write_text(pc.format("second", 20))
    with pytest.raises(ManifestError) as exc:
        load_paths([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    assert str(exc.value) == (
        f'{tmp_path / "b.yaml"}: document 1 (PriorityClass second): priorityclasses.scheduling.k8s.io "second" is '
        "forbidden: PriorityClass first is already marked as default. Only one default can exist"
    )


NAMESPACE_DOTS = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a.b}\n"


def test_namespace_name() -> None:
    assert pod_error(NAMESPACE_DOTS) == (
        'x.yaml: document 1 (Namespace a.b): Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": '
        "must not contain dots"
    )


def test_cluster_scoped_namespace_is_cleared() -> None:
    node = load_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1, namespace: x}\n").of_kind("Node")[0]
    assert node.metadata.namespace == ""  # type: ignore[attr-defined]


# ---------------------------------------------------------------- 7. duplicates


def test_duplicate_objects_name_both_places(tmp_path: Path) -> None:
    text = pod(C)
    (tmp_path / "a.yaml").write_text(text)
    (tmp_path / "b.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n" + text)
    with pytest.raises(ManifestError) as exc:
        load_paths([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    assert str(exc.value) == (
        f'{tmp_path / "b.yaml"}: document 2 (Pod default/p1): pods "p1" already exists '
        f"(first defined in {tmp_path / 'a.yaml'}: document 1)"
    )


def test_same_name_in_other_namespace_or_kind_is_fine() -> None:
    text = (
        pod(C) + "---\n" + pod(C, "name: p1, namespace: other")
        + "---\napiVersion: v1\nkind: Node\nmetadata: {name: p1}\n"
    )
    assert len(load_text(text).objects) == 3


def test_valid_examples_and_scenarios_still_load() -> None:
    root = Path(__file__).resolve().parents[2]
    clusters = sorted({f.parent for f in (root / "examples").rglob("*.yaml") if "cluster" in str(f.parent)})
    clusters += sorted(p for p in (root / "tests" / "e2e" / "scenarios").iterdir() if p.is_dir())
    assert len(clusters) > 30
    pods = 0
    for d in clusters:
        pods += len(load_paths([d]).of_kind("Pod"))
    assert pods > 50


def invalid_manifests() -> dict[str, str]:
    """Every single-object manifest above that the loader refuses as invalid, by case id: the same texts
    the tests load. tests/kube/test_validation_parity.py sends them to a real API server too. (The second
    globalDefault PriorityClass needs a first one stored, so it is not here.)"""
    cases = {
        "negative-cpu": NEGATIVE_CPU, "requests-above-limits": REQUESTS_ABOVE_LIMITS,
        "node-quantities": NODE_QUANTITIES, "anti-affinity": ANTI_AFFINITY, "spread-selector": SPREAD_SELECTOR,
        "node-taints": NODE_TAINTS, "big-annotations": BIG_ANNOTATIONS, "generate-name": GENERATE_NAME,
        "priority-name-and-gates": PRIORITY_NAME_AND_GATES, "namespace-dots": NAMESPACE_DOTS,
    }
    tables: list[tuple[str, list[tuple[str, str]], Callable[[str], str]]] = [
        ("container-resources", CONTAINER_RESOURCES, resources_pod),
        ("pod-affinity-selector", POD_AFFINITY_SELECTORS, lambda s: pod(term(s))),
        ("spread-constraint", SPREAD_CONSTRAINTS, spread_pod),
        ("node-affinity", NODE_AFFINITY_REQUIREMENTS, node_affinity_pod),
        ("toleration", TOLERATIONS, toleration_pod),
        ("object-meta", OBJECT_META, lambda m: pod(C, m)),
        ("containers", CONTAINERS, containers_pod),
        ("pdb", PDB_SPECS, pdb),
        ("priority-class", PRIORITY_CLASSES, priority_class),
    ]
    for prefix, table, build in tables:
        cases.update({f"{prefix}-{i}": build(value) for i, (value, _) in enumerate(table)})
    return cases


def test_invalid_manifests_are_all_refused() -> None:
    cases = invalid_manifests()
    assert len(cases) == 10 + sum(len(t) for t in (CONTAINER_RESOURCES, POD_AFFINITY_SELECTORS, SPREAD_CONSTRAINTS,
                                                    NODE_AFFINITY_REQUIREMENTS, TOLERATIONS, OBJECT_META, CONTAINERS,
                                                    PDB_SPECS, PRIORITY_CLASSES))
    for text in cases.values():
        pod_error(text)
