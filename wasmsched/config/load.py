"""Loading a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1) as kube-scheduler does:
parse YAML/JSON, decode strictly, apply the v1 defaults, validate."""

from __future__ import annotations

import os
from typing import Any

from wasmsched.api.decoding import MAX_CONFIG_BYTES, DecodeError, json_type_name, load_yaml, read_limited
from wasmsched.config.args import IN_TREE_ARGS
from wasmsched.config.decode import Reader, raise_if_errors
from wasmsched.config.defaults import (
    DEFAULT_PARALLELISM,
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    DEFAULT_SCHEDULER_NAME,
    default_plugin_config,
    default_plugins,
    merge_plugins,
)
from wasmsched.config.errors import ConfigError, FieldError, child, not_supported, required
from wasmsched.config.types import (
    API_VERSION,
    DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
    KIND,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)
from wasmsched.config.validation import validate_configuration
from wasmsched.framework.interface import EXTENSION_POINTS

_TOP_KEYS = (
    "apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
    "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds",
    "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive",
)  # fmt: skip
_PROFILE_KEYS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")
_LEADER_ELECTION_KEYS = (
    "leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock", "resourceName",
    "resourceNamespace",
)  # fmt: skip
_CLIENT_CONNECTION_KEYS = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")
_EXTENDER_STR_KEYS = ("urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb", "httpTimeout")
_EXTENDER_BOOL_KEYS = ("enableHTTPS", "nodeCacheCapable", "ignorable")
_TLS_KEYS = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")


def load_config(path: str | None) -> KubeSchedulerConfiguration:
    """Read, default and validate a KubeSchedulerConfiguration; None gives the pure defaults.

    Raises ConfigError naming the file and the field path of every problem found.
    """
    if path is None:
        return config_from_dict({"apiVersion": API_VERSION, "kind": KIND})
    name = os.path.basename(path)
    try:
        text = read_limited(path, MAX_CONFIG_BYTES)
    except DecodeError as e:
        raise ConfigError([f"reading config: {e.message}"], name) from None
    try:
        # the strict loader the manifests use: duplicate keys, alias and depth limits
        raw = load_yaml(text, name)
    except DecodeError as e:
        raise ConfigError([str(e)]) from None
    try:
        return config_from_dict(raw)
    except ConfigError as e:
        raise e.with_file(name) from None


def config_from_dict(raw: Any) -> KubeSchedulerConfiguration:
    """Decode (strictly), default and validate an already parsed configuration document."""
    errors: list[FieldError] = []
    if raw is None:
        raise ConfigError([f"config is empty: expected a {KIND} object"])
    if not isinstance(raw, dict):
        raise ConfigError([f"config must be a {KIND} object, got {json_type_name(raw)}"])
    r = Reader(raw, "", errors, _TOP_KEYS)
    for key, want in (("apiVersion", API_VERSION), ("kind", KIND)):
        value = r.string(key)
        if value is None:
            errors.append(required(key))
        elif value != want:
            errors.append(not_supported(key, value, [want]))
    raise_if_errors(errors)
    cfg = _decode_configuration(r)
    r.close()
    raise_if_errors(validate_configuration(cfg))
    return cfg


def _decode_configuration(r: Reader) -> KubeSchedulerConfiguration:
    profiles_raw = r.items("profiles") or [("profiles[0]", {})]
    single = len(profiles_raw) == 1
    enable_profiling = r.boolean("enableProfiling", True)
    return KubeSchedulerConfiguration(
        parallelism=r.int32("parallelism", DEFAULT_PARALLELISM),
        percentage_of_nodes_to_score=r.int32(
            "percentageOfNodesToScore", DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
        ),
        pod_initial_backoff_seconds=r.int64("podInitialBackoffSeconds", DEFAULT_POD_INITIAL_BACKOFF_SECONDS),
        pod_max_backoff_seconds=r.int64("podMaxBackoffSeconds", DEFAULT_POD_MAX_BACKOFF_SECONDS),
        profiles=[_decode_profile(item, p, r.errors, single) for p, item in profiles_raw],
        extenders=[_decode_extender(item, p, r.errors) for p, item in r.items("extenders")],
        leader_election=_keep(r, "leaderElection", _LEADER_ELECTION_KEYS),
        client_connection=_keep(r, "clientConnection", _CLIENT_CONNECTION_KEYS),
        enable_profiling=enable_profiling,
        enable_contention_profiling=r.boolean("enableContentionProfiling", enable_profiling),
        delay_cache_until_active=r.boolean("delayCacheUntilActive"),
    )


def _keep(r: Reader, key: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """A section wasmsched does not use: its keys are checked, its value kept as decoded."""
    return dict(Reader(r.raw(key), r.at(key), r.errors, keys).obj)


def _decode_extender(item: Any, path: str, errors: list[FieldError]) -> dict[str, Any]:
    er = Reader(
        item,
        path,
        errors,
        (*_EXTENDER_STR_KEYS, *_EXTENDER_BOOL_KEYS, "weight", "tlsConfig", "managedResources"),
    )
    for k in _EXTENDER_STR_KEYS:
        er.string(k)
    for k in _EXTENDER_BOOL_KEYS:
        er.boolean(k)
    er.int64("weight", 0)
    Reader(er.raw("tlsConfig"), er.at("tlsConfig"), errors, _TLS_KEYS)
    for p, res in er.items("managedResources"):
        rr = Reader(res, p, errors, ("name", "ignoredByScheduler"))
        rr.string("name")
        rr.boolean("ignoredByScheduler")
    return dict(er.obj)


def _decode_profile(item: Any, path: str, errors: list[FieldError], single: bool) -> KubeSchedulerProfile:
    pr = Reader(item, path, errors, _PROFILE_KEYS)
    name = pr.string("schedulerName")
    if name is None:
        # Only a lone profile gets the default name; validation requires one everywhere else.
        name = DEFAULT_SCHEDULER_NAME if single else ""
    custom = _decode_plugins(pr.raw("plugins"), pr.at("plugins"), errors) if pr.has("plugins") else None
    plugins = merge_plugins(default_plugins(), custom)
    configs = [_decode_plugin_config(c, p, errors) for p, c in pr.items("pluginConfig")]
    return KubeSchedulerProfile(
        scheduler_name=name,
        percentage_of_nodes_to_score=pr.opt_int("percentageOfNodesToScore"),
        plugins=plugins,
        plugin_config=default_plugin_config(plugins, configs),
    )


def _decode_plugins(raw: Any, path: str, errors: list[FieldError]) -> Plugins:
    r = Reader(raw, path, errors, [ep.key for ep in EXTENSION_POINTS])
    plugins = Plugins()
    for ep in EXTENSION_POINTS:
        sr = Reader(r.raw(ep.key), r.at(ep.key), errors, ("enabled", "disabled"))
        setattr(
            plugins, ep.attr, PluginSet(_decode_plugin_list(sr, "enabled"), _decode_plugin_list(sr, "disabled"))
        )
    return plugins


def _decode_plugin_list(r: Reader, key: str) -> list[Plugin]:
    out = []
    for p, item in r.items(key):
        pr = Reader(item, p, r.errors, ("name", "weight"))
        out.append(Plugin(pr.string("name", "") or "", pr.int32("weight", 0)))
    return out


def _decode_plugin_config(item: Any, path: str, errors: list[FieldError]) -> PluginConfig:
    r = Reader(item, path, errors, ("name", "args"))
    name = r.string("name", "") or ""
    args_cls = IN_TREE_ARGS.get(name)
    if args_cls is None:
        # Out-of-tree (e.g. wasm) plugins, and in-tree ones wasmsched lacks: args stay as written.
        return PluginConfig(name, r.raw("args"))
    raw = r.raw("args")
    try:
        return PluginConfig(name, args_cls.from_dict({} if raw is None else raw, child(path, "args")))
    except ConfigError as e:
        errors.extend(x for x in e.errors if isinstance(x, FieldError))
        return PluginConfig(name, args_cls.default())
