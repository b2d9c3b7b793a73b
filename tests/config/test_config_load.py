"""load_config: defaults (as kube-scheduler's v1 defaults_test.go), strict decoding, file errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wasmsched.config import ConfigError, KubeSchedulerConfiguration, load_config
from wasmsched.config.args import (
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    VolumeBindingArgs,
)
from wasmsched.config.types import Plugin

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
DEFAULT_ARGS_ORDER = [
    "DefaultPreemption",
    "DynamicResources",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "PodTopologySpread",
    "VolumeBinding",
]


def load(tmp_path: Path, body: str, name: str = "scheduler.yaml") -> KubeSchedulerConfiguration:
    f = tmp_path / name
    f.write_text(HEADER + textwrap.dedent(body))
    return load_config(str(f))


def load_error(tmp_path: Path, body: str, name: str = "scheduler.yaml", header: str = HEADER) -> str:
    f = tmp_path / name
    f.write_text(header + textwrap.dedent(body))
    with pytest.raises(ConfigError) as exc:
        load_config(str(f))
    return str(exc.value)


def test_pure_defaults() -> None:
    cfg = load_config(None)
    assert cfg.parallelism == 16
    assert cfg.percentage_of_nodes_to_score == 0  # v1 default: 0 = adaptive
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    assert cfg.enable_profiling and cfg.enable_contention_profiling
    assert len(cfg.profiles) == 1
    prof = cfg.profiles[0]
    assert prof.scheduler_name == "default-scheduler"
    assert prof.percentage_of_nodes_to_score is None
    assert [p.name for p in prof.plugins.multi_point.enabled][:2] == ["SchedulingGates", "PrioritySort"]
    assert [pc.name for pc in prof.plugin_config] == DEFAULT_ARGS_ORDER
    assert prof.args_for("DefaultPreemption") == DefaultPreemptionArgs(10, 100)
    assert prof.args_for("InterPodAffinity") == InterPodAffinityArgs(1, False)
    assert prof.args_for("NodeAffinity") == NodeAffinityArgs(None)
    fit = prof.args_for("NodeResourcesFit")
    assert isinstance(fit, NodeResourcesFitArgs)
    assert fit.scoring_strategy.type == "LeastAllocated"
    assert [(r.name, r.weight) for r in fit.scoring_strategy.resources] == [("cpu", 1), ("memory", 1)]
    ba = prof.args_for("NodeResourcesBalancedAllocation")
    assert isinstance(ba, NodeResourcesBalancedAllocationArgs)
    assert [(r.name, r.weight) for r in ba.resources] == [("cpu", 1), ("memory", 1)]
    pts = prof.args_for("PodTopologySpread")
    assert isinstance(pts, PodTopologySpreadArgs)
    assert pts.defaulting_type == "System" and pts.default_constraints == []
    got = [(c.topologyKey, c.maxSkew, c.whenUnsatisfiable) for c in pts.effective_default_constraints()]
    assert got == [
        ("kubernetes.io/hostname", 3, "ScheduleAnyway"),
        ("topology.kubernetes.io/zone", 5, "ScheduleAnyway"),
    ]


def test_minimal_file_equals_defaults(tmp_path: Path) -> None:
    assert load(tmp_path, "") == load_config(None)


def test_json_file(tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    f.write_text(
        '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
        ' "parallelism": 8, "profiles": [{"schedulerName": "a"}]}'
    )
    cfg = load_config(str(f))
    assert cfg.parallelism == 8 and cfg.profiles[0].scheduler_name == "a"


def test_top_level_values_and_kept_fields(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        parallelism: 4
        percentageOfNodesToScore: 30
        podInitialBackoffSeconds: 2
        podMaxBackoffSeconds: 20
        enableProfiling: false
        delayCacheUntilActive: true
        leaderElection: {leaderElect: false, resourceName: foo}
        clientConnection: {kubeconfig: /tmp/kc, qps: 10, burst: 20}
        extenders:
        - urlPrefix: http://127.0.0.1:1
          filterVerb: filter
          managedResources: [{name: example.com/foo, ignoredByScheduler: true}]
        """,
    )
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (4, 30)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (2, 20)
    assert not cfg.enable_profiling and not cfg.enable_contention_profiling
    assert cfg.delay_cache_until_active
    assert cfg.leader_election == {"leaderElect": False, "resourceName": "foo"}
    assert cfg.client_connection["kubeconfig"] == "/tmp/kc"
    assert cfg.extenders[0]["filterVerb"] == "filter"


def test_two_profiles_need_names(tmp_path: Path) -> None:
    cfg = load(tmp_path, "profiles: [{schedulerName: a, percentageOfNodesToScore: 50}, {schedulerName: b}]")
    assert [p.scheduler_name for p in cfg.profiles] == ["a", "b"]
    assert cfg.profiles[0].percentage_of_nodes_to_score == 50
    assert cfg.profile("b") is cfg.profiles[1] and cfg.profile("c") is None
    # Only a lone profile gets the default name.
    msg = load_error(tmp_path, "profiles: [{schedulerName: a}, {}]")
    assert msg == "scheduler.yaml: profiles[1].schedulerName: Required value"


def test_custom_plugins_merged_with_defaults(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        profiles:
        - plugins:
            multiPoint:
              enabled:
              - {name: NodeResourcesFit, weight: 5}
              - {name: MyWasm, weight: 3}
              disabled:
              - name: ImageLocality
              - name: VolumeBinding
            score:
              disabled: [{name: "*"}]
              enabled: [{name: TaintToleration, weight: 7}]
            bind:
              enabled: [{name: MyBinder}]
              disabled: [{name: DefaultBinder}]
          pluginConfig:
          - name: MyWasm
            args: {guestURL: "file:///x.wasm", nested: {a: 1}}
          - name: VolumeBinding
            args: {bindTimeoutSeconds: 5}
        """,
    )
    prof = cfg.profiles[0]
    mp = [(p.name, p.weight) for p in prof.plugins.multi_point.enabled]
    assert ("ImageLocality", 1) not in mp
    assert ("NodeResourcesFit", 5) in mp and mp.index(("NodeResourcesFit", 5)) == 7  # replaced in place
    assert mp[-1] == ("MyWasm", 3)
    assert [p.name for p in prof.plugins.multi_point.disabled] == ["ImageLocality", "VolumeBinding"]
    assert prof.plugins.score.enabled == [Plugin("TaintToleration", 7)]
    assert prof.plugins.score.disabled == [Plugin("*")]
    assert prof.plugins.bind.enabled == [Plugin("MyBinder")]
    # Raw args for plugins that are not in IN_TREE_ARGS; defaults appended for in-tree ones.
    assert prof.args_for("MyWasm") == {"guestURL": "file:///x.wasm", "nested": {"a": 1}}
    assert prof.args_for("VolumeBinding") == VolumeBindingArgs(5)
    assert [pc.name for pc in prof.plugin_config] == [
        "MyWasm", "VolumeBinding", *(n for n in DEFAULT_ARGS_ORDER if n != "VolumeBinding")]


def test_disable_all_multi_point_drops_default_args(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        profiles:
        - plugins:
            multiPoint:
              disabled: [{name: "*"}]
              enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: NodeAffinity}]
        """,
    )
    prof = cfg.profiles[0]
    assert [p.name for p in prof.plugins.multi_point.enabled] == [
        "PrioritySort",
        "DefaultBinder",
        "NodeAffinity",
    ]
    assert [pc.name for pc in prof.plugin_config] == ["NodeAffinity"]


def test_user_args_are_defaulted(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        profiles:
        - pluginConfig:
          - name: DefaultPreemption
            args: {minCandidateNodesAbsolute: 50}
          - name: NodeResourcesFit
            args:
              scoringStrategy:
                type: MostAllocated
                resources: [{name: cpu, weight: 0}, {name: nvidia.com/gpu, weight: 5}]
          - name: NodeResourcesBalancedAllocation
            args: {resources: [{name: cpu}]}
          - name: PodTopologySpread
            args:
              apiVersion: kubescheduler.config.k8s.io/v1
              kind: PodTopologySpreadArgs
              defaultingType: List
              defaultConstraints:
              - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
          - name: NodeAffinity
            args:
              addedAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions: [{key: foo, operator: In, values: [bar]}]
          - name: InterPodAffinity
            args: {ignorePreferredTermsOfExistingPods: true}
        """,
    )
    prof = cfg.profiles[0]
    assert prof.args_for("DefaultPreemption") == DefaultPreemptionArgs(10, 50)
    fit = prof.args_for("NodeResourcesFit")
    assert isinstance(fit, NodeResourcesFitArgs)
    assert fit.scoring_strategy.type == "MostAllocated"
    assert [(r.name, r.weight) for r in fit.scoring_strategy.resources] == [("cpu", 1), ("nvidia.com/gpu", 5)]
    ba = prof.args_for("NodeResourcesBalancedAllocation")
    assert isinstance(ba, NodeResourcesBalancedAllocationArgs)
    assert [(r.name, r.weight) for r in ba.resources] == [("cpu", 1)]
    pts = prof.args_for("PodTopologySpread")
    assert isinstance(pts, PodTopologySpreadArgs)
    assert pts.defaulting_type == "List"
    assert [(c.topologyKey, c.maxSkew) for c in pts.effective_default_constraints()] == [
        ("topology.kubernetes.io/zone", 1)
    ]
    na = prof.args_for("NodeAffinity")
    assert isinstance(na, NodeAffinityArgs) and na.added_affinity is not None
    term = na.added_affinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]
    assert term.matchExpressions[0].key == "foo" and list(term.matchExpressions[0].values) == ["bar"]
    assert prof.args_for("InterPodAffinity") == InterPodAffinityArgs(1, True)


def test_missing_args_for_in_tree_plugin_are_defaults(tmp_path: Path) -> None:
    cfg = load(tmp_path, "profiles: [{pluginConfig: [{name: InterPodAffinity}]}]")
    assert cfg.profiles[0].args_for("InterPodAffinity") == InterPodAffinityArgs()


# --- file-level and decoding errors ------------------------------------------------------------


def test_malformed_yaml_names_file(tmp_path: Path) -> None:
    msg = load_error(tmp_path, "profiles: [\n  - {a: 1\n", name="bad.yaml")
    assert msg == "bad.yaml:4:3: did not find expected node content"
    assert "\n" not in msg


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(str(tmp_path / "nope.yaml"))
    assert str(exc.value).startswith("nope.yaml: reading config: ")


def test_not_an_object(tmp_path: Path) -> None:
    msg = load_error(tmp_path, "", header="- 1\n")
    assert msg == "scheduler.yaml: config must be a KubeSchedulerConfiguration object, got array"


def test_api_version_and_kind(tmp_path: Path) -> None:
    msg = load_error(
        tmp_path,
        "kind: KubeSchedulerConfiguration\n",
        header="apiVersion: kubescheduler.config.k8s.io/v1beta3\n",
    )
    assert msg == (
        'scheduler.yaml: apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": '
        'supported values: "kubescheduler.config.k8s.io/v1"'
    )
    assert load_error(tmp_path, "", header="{}\n") == (
        "scheduler.yaml: [apiVersion: Required value, kind: Required value]"
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("foo: 1", "foo"),
        ("healthzBindAddress: 0.0.0.0:10251", "healthzBindAddress"),  # dropped from v1
        ("leaderElection: {leaderElect: true, bogus: 1}", "leaderElection.bogus"),
        ("profiles: [{schedulerName: a, bogus: 1}]", "profiles[0].bogus"),
        ("profiles: [{plugins: {scores: {}}}]", "profiles[0].plugins.scores"),
        (
            "profiles: [{plugins: {score: {enabled: [{name: A, wieght: 1}]}}}]",
            "profiles[0].plugins.score.enabled[0].wieght",
        ),
        (
            "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {typo: x}}}]}]",
            "profiles[0].pluginConfig[0].args.scoringStrategy.typo",
        ),
        (
            (
                "profiles: [{pluginConfig: [{name: PodTopologySpread, args: {defaultingType: List,"
                " defaultConstraints: [{maxSkew: 1, topologyKey: k, whenUnsatisfiable: DoNotSchedule, foo: 1}]}}]}]"
            ),
            "profiles[0].pluginConfig[0].args.defaultConstraints[0].foo",
        ),
        (
            (
                "profiles: [{pluginConfig: [{name: NodeAffinity, args: {addedAffinity:"
                " {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpression: []}]}}}}]}]"
            ),
            (
                "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                ".nodeSelectorTerms[0].matchExpression"
            ),
        ),
        ("extenders: [{urlPrefix: x, tlsConfig: {nope: true}}]", "extenders[0].tlsConfig.nope"),
    ],
)
def test_unknown_fields(tmp_path: Path, body: str, field: str) -> None:
    # kube's text, then the allowed key closest to the unknown one, if any is close.
    hint = {"scores": "score", "wieght": "weight", "typo": "type", "matchExpression": "matchExpressions"}.get(
        field.rsplit(".", 1)[-1])
    suffix = f'; did you mean "{hint}"?' if hint else ""
    assert load_error(tmp_path, body) == f'scheduler.yaml: strict decoding error: unknown field "{field}"{suffix}'


def test_unknown_field_differing_in_case_only(tmp_path: Path) -> None:
    msg = load_error(tmp_path, "profiles: [{schedulerName: a, pluginconfig: []}]")
    assert msg == ('scheduler.yaml: strict decoding error: unknown field "profiles[0].pluginconfig"; '
                   'did you mean "pluginConfig"?')


def test_duplicate_key(tmp_path: Path) -> None:
    msg = load_error(tmp_path, "parallelism: 1\nparallelism: 2\n")
    assert msg == 'scheduler.yaml:4:1: key "parallelism" already set in map'


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "parallelism: abc",
            'parallelism: Invalid value: "abc": cannot unmarshal string into a field of type int32',
        ),
        (
            "parallelism: 1.5",
            "parallelism: Invalid value: 1.5: cannot unmarshal number into a field of type int32",
        ),
        (
            "parallelism: 3000000000",
            "parallelism: Invalid value: 3000000000: cannot unmarshal number 3000000000 into a field of type int32",
        ),
        (
            "enableProfiling: 1",
            "enableProfiling: Invalid value: 1: cannot unmarshal number into a field of type bool",
        ),
        ("profiles: {}", "profiles: Invalid value: {}: cannot unmarshal object into a field of type array"),
        (
            "profiles: [{pluginConfig: [{name: DefaultPreemption, args: [1]}]}]",
            "profiles[0].pluginConfig[0].args: Invalid value: [1]: cannot unmarshal array into a field of type object",
        ),
        (
            "profiles: [{pluginConfig: [{name: NodeAffinity, args: {kind: PodTopologySpreadArgs}}]}]",
            (
                'profiles[0].pluginConfig[0].args.kind: Invalid value: "PodTopologySpreadArgs": args for plugin'
                " NodeAffinity were not of type NodeAffinityArgs.kubescheduler.config.k8s.io"
            ),
        ),
    ],
)
def test_type_errors(tmp_path: Path, body: str, expected: str) -> None:
    assert load_error(tmp_path, body) == "scheduler.yaml: " + expected
