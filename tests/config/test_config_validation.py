"""Validation as kube-scheduler's validation.go / validation_pluginargs.go: exact paths and messages."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wasmsched.config import ConfigError, load_config
from wasmsched.config.types import Plugin, Plugins, PluginSet
from wasmsched.config.validation import validate_score_weights

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
INVALID_IN_V1 = (
    'was invalid in version "kubescheduler.config.k8s.io/v1" '
    '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
)


def errors_of(tmp_path: Path, body: str) -> list[str]:
    f = tmp_path / "scheduler.yaml"
    f.write_text(HEADER + textwrap.dedent(body))
    with pytest.raises(ConfigError) as exc:
        load_config(str(f))
    assert str(exc.value).startswith("scheduler.yaml: ")
    assert "\n" not in str(exc.value)
    return [str(e) for e in exc.value.errors]


def args_errors(tmp_path: Path, plugin: str, args: str) -> list[str]:
    body = f"profiles:\n- pluginConfig:\n  - name: {plugin}\n    args:\n" + textwrap.indent(
        textwrap.dedent(args), "      "
    )
    return errors_of(tmp_path, body)


A = "profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("parallelism: 0", ["parallelism: Invalid value: 0: should be an integer value greater than zero"]),
        (
            "percentageOfNodesToScore: 101",
            ["percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"],
        ),
        (
            "profiles: [{percentageOfNodesToScore: -1}]",
            ["profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"],
        ),
        (
            "podInitialBackoffSeconds: 0",
            ["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"],
        ),
        (
            "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4",
            [
                "podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds"
            ],
        ),
        ("profiles: [{schedulerName: ''}]", ["profiles[0].schedulerName: Required value"]),
        (
            "profiles: [{schedulerName: foo}, {schedulerName: bar}, {schedulerName: foo}]",
            ['profiles[2].schedulerName: Duplicate value: "foo"'],
        ),
        (
            "profiles: [{pluginConfig: [{name: MyPlugin}, {name: MyPlugin, args: {a: 1}}]}]",
            ['profiles[0].pluginConfig[1]: Duplicate value: "MyPlugin"'],
        ),
        (
            "profiles: [{plugins: {filter: {enabled: [{name: Foo}, {name: EBSLimits}]}}}]",
            [f'profiles[0].plugins.filter.enabled[1]: Invalid value: "EBSLimits": {INVALID_IN_V1}'],
        ),
        (
            "profiles: [{pluginConfig: [{name: GCEPDLimits, args: {}}]}]",
            [f'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": {INVALID_IN_V1}'],
        ),
        (
            "leaderElection: {leaderElect: true, resourceLock: endpoints}",
            ['leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"'],
        ),
        (
            "extenders: [{urlPrefix: x, prioritizeVerb: p}]",
            ["extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"],
        ),
        (
            "extenders: [{urlPrefix: x, bindVerb: b}, {urlPrefix: y, bindVerb: b}]",
            [
                'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind'
            ],
        ),
        (
            "extenders: [{urlPrefix: x, managedResources: [{name: cpu}, {name: example.com/a},"
            " {name: example.com/a}]}]",
            [
                'extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name',
                (
                    'extenders[0].managedResources[2].name: Invalid value: "example.com/a": '
                    "duplicate extender managed resource name"
                ),
            ],
        ),
    ],
)
def test_configuration_errors(tmp_path: Path, body: str, expected: list[str]) -> None:
    assert errors_of(tmp_path, body) == expected


def test_queue_sort_must_match(tmp_path: Path) -> None:
    errs = errors_of(
        tmp_path,
        """
        profiles:
        - schedulerName: a
          plugins: {queueSort: {enabled: [{name: A}, {name: B}]}}
        - schedulerName: b
        """,
    )
    assert (
        errs[0]
        == "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled"
    )
    assert errs[1].startswith("profiles[1].plugins.queueSort: Invalid value: ")
    assert errs[1].endswith(": must be the same for all profiles")
    assert len(errs) == 2


def test_queue_sort_args_must_match(tmp_path: Path) -> None:
    errs = errors_of(
        tmp_path,
        """
        profiles:
        - schedulerName: a
          plugins: {queueSort: {enabled: [{name: MySort}], disabled: [{name: "*"}]}}
          pluginConfig: [{name: MySort, args: {x: 1}}]
        - schedulerName: b
          plugins: {queueSort: {enabled: [{name: MySort}], disabled: [{name: "*"}]}}
          pluginConfig: [{name: MySort, args: {x: 2}}]
        """,
    )
    assert errs == [
        'profiles[1].pluginConfig.args: Invalid value: {"x":2}: queueSort must be the same for all profiles'
    ]


def test_same_queue_sort_is_fine(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(
        HEADER
        + "profiles:\n"
        + "".join(
            f"- schedulerName: {n}\n  plugins: {{queueSort: {{enabled: [{{name: S}}], disabled: [{{name: '*'}}]}}}}\n"
            for n in "ab"
        )
    )
    cfg = load_config(str(f))
    assert [p.plugins.queue_sort.enabled for p in cfg.profiles] == [[Plugin("S")], [Plugin("S")]]


def test_negative_score_weight_is_accepted_as_in_kube(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(HEADER + "profiles: [{plugins: {score: {enabled: [{name: X, weight: -1}]}}}]\n")
    assert load_config(str(f)).profiles[0].plugins.score.enabled == [Plugin("X", -1)]


def test_score_weight_overflow() -> None:
    big = 2**62
    plugins = Plugins(score=PluginSet(enabled=[Plugin("A", big // 100), Plugin("B", big // 100)]))
    assert validate_score_weights(plugins, "profiles[0].plugins") == []
    plugins.multi_point.enabled.append(Plugin("C", big // 100))
    errs = validate_score_weights(plugins, "profiles[0].plugins")
    assert [str(e) for e in errs] == [
        "profiles[0].plugins: Invalid value: total score of Score plugins could overflow"
    ]
    # A name counts once, the score extension point's weight first; weight 0 counts as 1.
    plugins = Plugins(
        score=PluginSet(enabled=[Plugin("A", 1)]),
        multi_point=PluginSet(enabled=[Plugin("A", big), Plugin("Z", 0)]),
    )
    assert validate_score_weights(plugins, "p") == []


# --- plugin args --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plugin", "args", "expected"),
    [
        (
            "DefaultPreemption",
            "{minCandidateNodesPercentage: 101, minCandidateNodesAbsolute: -1}",
            [
                f"{A}.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
                f"{A}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
            ],
        ),
        (
            "DefaultPreemption",
            "{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}",
            [
                (
                    f"{A}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                    "minCandidateNodesAbsolute"
                ),
                (
                    f"{A}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                    "minCandidateNodesPercentage"
                ),
            ],
        ),
        (
            "InterPodAffinity",
            "{hardPodAffinityWeight: 101}",
            [f"{A}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"],
        ),
        (
            "NodeResourcesFit",
            "{ignoredResourceGroups: [example.com/aaa], ignoredResources: [-bad]}",
            [
                (
                    f'{A}.ignoredResources[0]: Invalid value: "-bad": name part must consist of alphanumeric '
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                    "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
                ),
                (
                    f"{A}.ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": resource group name can't "
                    "contain '/'"
                ),
            ],
        ),
        (
            "NodeResourcesFit",
            "{scoringStrategy: {type: Foo, resources: [{name: cpu, weight: 101}]}}",
            [
                (
                    f'{A}.scoringStrategy.type: Unsupported value: "Foo": supported values: "LeastAllocated", '
                    '"MostAllocated", "RequestedToCapacityRatio"'
                ),
                (
                    f"{A}.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid "
                    "range (0, 100]"
                ),
            ],
        ),
        (
            "NodeResourcesFit",
            "{scoringStrategy: {resources: [{name: cpu}]}}",
            [
                (
                    f'{A}.scoringStrategy.type: Unsupported value: "": supported values: "LeastAllocated", '
                    '"MostAllocated", "RequestedToCapacityRatio"'
                )
            ],
        ),
        (
            "NodeResourcesFit",
            "{scoringStrategy: {type: RequestedToCapacityRatio}}",
            [
                (
                    f"{A}.scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is "
                    "RequestedToCapacityRatio"
                )
            ],
        ),
        (
            "NodeResourcesFit",
            "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {}}}",
            [
                (
                    f"{A}.scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be "
                    "specified"
                ),
            ],
        ),
        (
            "NodeResourcesFit",
            """
            scoringStrategy:
              type: RequestedToCapacityRatio
              requestedToCapacityRatio:
                shape: [{utilization: 50, score: 11}, {utilization: 50, score: 0}, {utilization: 101, score: -1}]
            """,
            [
                (
                    f"{A}.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 50: values "
                    "must be sorted in increasing order"
                ),
                (
                    f"{A}.scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid "
                    "range [0, 10]"
                ),
                (
                    f"{A}.scoringStrategy.requestedToCapacityRatio.shape[2].utilization: Invalid value: 101: not in "
                    "valid range [0, 100]"
                ),
                (
                    f"{A}.scoringStrategy.requestedToCapacityRatio.shape[2].score: Invalid value: -1: not in valid "
                    "range [0, 10]"
                ),
            ],
        ),
        (
            "NodeResourcesFit",
            "{scoringStrategy: {type: MostAllocated, requestedToCapacityRatio: {shape: []}}}",
            [
                (
                    f"{A}.scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not "
                    "RequestedToCapacityRatio"
                )
            ],
        ),
        (
            "NodeResourcesBalancedAllocation",
            "{resources: [{name: cpu}, {name: memory, weight: 2}, {name: cpu}]}",
            [
                f"{A}.resources[1].weight: Invalid value: 2: must be 1",
                f'{A}.resources[2].name: Duplicate value: "cpu"',
            ],
        ),
        (
            "PodTopologySpread",
            "{defaultConstraints: [{maxSkew: 1, topologyKey: k, whenUnsatisfiable: DoNotSchedule}]}",
            [f'{A}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty'],
        ),
        (
            "PodTopologySpread",
            "{defaultingType: Foo}",
            [f'{A}.defaultingType: Unsupported value: "Foo": supported values: "System", "List"'],
        ),
        (
            "PodTopologySpread",
            """
            defaultingType: List
            defaultConstraints:
            - {maxSkew: 0, topologyKey: "", whenUnsatisfiable: Sometimes}
            - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}
            - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
            - {maxSkew: 2, topologyKey: node}
            """,
            [
                f"{A}.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
                f"{A}.defaultConstraints[0].topologyKey: Required value: can not be empty",
                (
                    f'{A}.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: '
                    '"DoNotSchedule", "ScheduleAnyway"'
                ),
                (
                    f"{A}.defaultConstraints[1].labelSelector: Forbidden: constraint must not define a selector, as "
                    "they deduced for each pod"
                ),
                f'{A}.defaultConstraints[2]: Duplicate value: "{{zone, DoNotSchedule}}"',
                f"{A}.defaultConstraints[3].whenUnsatisfiable: Required value: can not be empty",
            ],
        ),
        (
            "NodeAffinity",
            """
            addedAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                - matchExpressions:
                  - {key: a, operator: Equals, values: [x]}
                  - {key: b, operator: In}
                  - {key: c, operator: Gt, values: [x, "2"]}
                  - {key: d, operator: Exists, values: [x]}
                  - {key: e, operator: In, values: ["bad value"]}
                - {}
                - matchFields: [{key: metadata.name, operator: In, values: [a, b]}, {key: k, operator: Exists}]
              preferredDuringSchedulingIgnoredDuringExecution:
              - {weight: 0, preference: {matchExpressions: [{key: a, operator: Bogus}]}}
              - {weight: 1, preference: {matchExpressions: [{key: a, operator: Bogus}]}}
            """,
            [
                (
                    f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                    '.matchExpressions[0].operator: Unsupported value: "Equals": supported values: "In", "NotIn", '
                    '"Exists", "DoesNotExist", "Gt", "Lt"'
                ),
                (
                    f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                    ".matchExpressions[1].values: Invalid value: []: for 'in', 'notin' operators, values set "
                    "can't be empty"
                ),
                (
                    f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                    ".matchExpressions[2].values: Invalid value: [\"x\",\"2\"]: for 'Gt', 'Lt' operators, "
                    "exactly one value is required"
                ),
                (
                    f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                    ".matchExpressions[2].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be "
                    "an integer"
                ),
                (
                    f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                    '.matchExpressions[3].values: Invalid value: ["x"]: values set must be empty for exists and '
                    "does not exist"
                ),
                (
                    f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                    '.matchExpressions[4].values[0][e]: Invalid value: "bad value": a valid label must be an empty '
                    "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                    "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
                ),
                (
                    f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[2]"
                    '.matchFields[0].values: Invalid value: ["a","b"]: must have one element'
                ),
                (
                    f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[2]"
                    '.matchFields[1].operator: Unsupported value: "Exists": supported values: "In", "NotIn"'
                ),
                (
                    f"{A}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].matchExpressions[0]"
                    '.operator: Unsupported value: "Bogus": supported values: "In", "NotIn", "Exists", "DoesNotExist", '
                    '"Gt", "Lt"'
                ),
            ],
        ),
    ],
)
def test_plugin_args_errors(tmp_path: Path, plugin: str, args: str, expected: list[str]) -> None:
    assert args_errors(tmp_path, plugin, args) == expected


def test_invalid_label_key_in_added_affinity(tmp_path: Path) -> None:
    errs = args_errors(
        tmp_path,
        "NodeAffinity",
        "addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "{nodeSelectorTerms: [{matchExpressions: [{key: 'a/b/c', operator: Exists}]}]}}",
    )
    assert errs == [
        (
            f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            '.matchExpressions[0].key: Invalid value: "a/b/c": a qualified name must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
            "or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
            "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        )
    ]


def test_errors_of_several_profiles_are_all_reported(tmp_path: Path) -> None:
    errs = errors_of(
        tmp_path,
        """
        parallelism: -1
        profiles:
        - schedulerName: a
          pluginConfig: [{name: InterPodAffinity, args: {hardPodAffinityWeight: -5}}]
        - schedulerName: a
        """,
    )
    assert errs == [
        "parallelism: Invalid value: -1: should be an integer value greater than zero",
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: -5: not in valid range [0, 100]",
        'profiles[1].schedulerName: Duplicate value: "a"',
    ]
