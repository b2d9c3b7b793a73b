"""A wasm plugin's `pluginConfig[].args` (docs/abi.md §9), decoded and typed.

Keys, types and defaults are kube-scheduler-wasm-extension's plus wasmsched's additions. Decode
errors carry the text of §10 (`failed to decode into <plugin> PluginConfig: <detail>`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wasmsched.api.decoding import json_type_name
from wasmsched.api.gvr import GroupVersionResource
from wasmsched.api.wellknown import parse_go_duration
from wasmsched.util.intbounds import INT32_MAX, INT32_MIN
from wasmsched.util.suggest import close_match
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.oci.options import OciOptions
from wasmsched.wasm.oci.reference import BadReference, is_oci
from wasmsched.wasm.oci.reference import parse as parse_reference

log = logging.getLogger("wasmsched.wasm")

DEFAULT_TIMEOUT = 1.0
DEFAULT_START_TIMEOUT = 10.0
DEFAULT_MEMORY_LIMIT_PAGES = 4096  # 256 MiB
DEFAULT_MAX_INSTANCES = 32
DEFAULT_FAULT_COOLDOWN = 30.0
FAILURE_POLICIES = ("Fail", "Ignore")
WASM_PAGE = 65536
# A 32-bit memory cannot have more pages than this.
MAX_PAGES = 65536

_HEX = re.compile(r"^[0-9a-fA-F]{64}$")
# An API group is a DNS subdomain (or "" for the core group), a version and a resource DNS labels, as the
# API server accepts them in a CustomResourceDefinition (spec.group, spec.versions[].name, spec.names.plural).
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_GVR_KEYS = ("group", "version", "resource")
# Keys that only an oci:// guestURL uses (§9): given with another scheme they are a mistake, not a no-op.
_OCI_KEYS = ("registryConfig", "plainHTTP", "caFile", "verify")
# Every key decode_args reads, for "did you mean" on the others.
ARGS_KEYS = ("guestURL", "guestConfig", "logSeverity", "args", "timeout", "startTimeout", "memoryLimitPages",
             "maxInstances", "guestSHA256", "watch", "sharedInstance", "failurePolicy", "maxConsecutiveFaults",
             "faultCooldown", "reloadInterval", *_OCI_KEYS)


@dataclass
class WasmPluginArgs:
    guest_url: str
    guest_config: str = ""
    log_severity: int = 0
    args: list[str] = field(default_factory=list)
    # Seconds; None means no limit ("0s").
    timeout: float | None = DEFAULT_TIMEOUT
    timeout_text: str = "1s"
    start_timeout: float | None = DEFAULT_START_TIMEOUT
    start_timeout_text: str = "10s"
    memory_limit_pages: int = DEFAULT_MEMORY_LIMIT_PAGES
    max_instances: int = DEFAULT_MAX_INSTANCES
    guest_sha256: str | None = None
    # The resources the plugin reads besides pods and nodes (§14.2): `run` watches each one, `simulate`
    # reads their objects from the manifests; through `Handle.watched_objects`.
    watch: tuple[GroupVersionResource, ...] = ()
    # §15.6: one instance serves every pod, its memory the plugin's state across pods.
    shared_instance: bool = False
    # Faults (a trap, a timeout, a malformed answer): "Fail" makes them Error statuses, "Ignore" "no opinion".
    failure_policy: str = "Fail"
    # The circuit breaker (wasm/circuit.py): 0 never opens it.
    max_consecutive_faults: int = 0
    fault_cooldown: float = DEFAULT_FAULT_COOLDOWN
    fault_cooldown_text: str = "30s"
    # Seconds between checks of guestURL for a new module (wasm/reload.py); None: never reloaded.
    reload_interval: float | None = None
    # An oci:// guestURL's registry options (registryConfig, plainHTTP, caFile, verify).
    oci: OciOptions = field(default_factory=OciOptions)
    warnings: list[str] = field(default_factory=list)


def is_wasm_args(raw: object) -> bool:
    """A plugin is a wasm plugin when its args carry `guestURL` (even an empty one: that is an error)."""
    return isinstance(raw, Mapping) and "guestURL" in raw


def misspelled_guest_url(raw: object) -> str | None:
    """Args without guestURL but with a key meant as it (`guestUrl`, `guest_url`): the error's text. Without
    it the plugin is no wasm plugin, and the user would only hear that the plugin does not exist."""
    if not isinstance(raw, Mapping) or "guestURL" in raw:
        return None
    for key in raw:
        if close_match(str(key), ["guestURL"]) is not None:
            return f'args: unknown key "{key}"; did you mean "guestURL"? (a wasm plugin\'s args need guestURL)'
    return None


def decode_args(plugin: str, raw: object) -> WasmPluginArgs:
    def fail(detail: str) -> WasmLoadError:
        return WasmLoadError(f"failed to decode into {plugin} PluginConfig: {detail}")

    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise fail(f"args must be an object, got {json_type_name(raw)}")
    url = raw.get("guestURL", "")
    if not isinstance(url, str):
        raise fail(f"guestURL: expected a string, got {json_type_name(url)}")
    if not url:
        raise WasmLoadError("wasm: guestURL is required")
    out = WasmPluginArgs(guest_url=url)
    for key, value in raw.items():
        if key == "guestURL":
            continue
        if key == "guestConfig":
            out.guest_config = _string(fail, key, value)
        elif key == "logSeverity":
            out.log_severity = _int(fail, key, value, INT32_MIN, INT32_MAX)
        elif key in ("args", "Args"):
            if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
                raise fail(f"{key}: expected a list of strings")
            out.args = list(value)
        elif key == "timeout":
            out.timeout, out.timeout_text = _duration(fail, key, value)
        elif key == "startTimeout":
            out.start_timeout, out.start_timeout_text = _duration(fail, key, value)
        elif key == "memoryLimitPages":
            out.memory_limit_pages = _int(fail, key, value, 1, MAX_PAGES)
        elif key == "maxInstances":
            out.max_instances = _int(fail, key, value, 1, 1 << 20)
        elif key == "guestSHA256":
            text = _string(fail, key, value)
            if not _HEX.match(text):
                raise fail(f"guestSHA256: expected 64 hex digits, got {text!r}")
            out.guest_sha256 = text.lower()
        elif key == "watch":
            out.watch = _watch(fail, value)
        elif key == "sharedInstance":
            if not isinstance(value, bool):
                raise fail(f"sharedInstance: expected a boolean, got {json_type_name(value)}")
            out.shared_instance = value
        elif key == "failurePolicy":
            text = _string(fail, key, value)
            if text not in FAILURE_POLICIES:
                raise fail(f'failurePolicy: {text!r} is not one of "Fail", "Ignore"')
            out.failure_policy = text
        elif key == "maxConsecutiveFaults":
            out.max_consecutive_faults = _int(fail, key, value, 0, INT32_MAX)
        elif key == "faultCooldown":
            cooldown, out.fault_cooldown_text = _duration(fail, key, value)
            if cooldown is None:
                raise fail("faultCooldown: must be positive")
            out.fault_cooldown = cooldown
        elif key == "reloadInterval":
            out.reload_interval, _ = _duration(fail, key, value)
        elif key == "registryConfig":
            out.oci = replace(out.oci, registry_config=Path(_string(fail, key, value)))
        elif key == "caFile":
            out.oci = replace(out.oci, ca_file=Path(_string(fail, key, value)))
        elif key == "plainHTTP":
            if not isinstance(value, bool):
                raise fail(f"plainHTTP: expected a boolean, got {json_type_name(value)}")
            out.oci = replace(out.oci, plain_http=value)
        elif key == "verify":
            out.oci = replace(out.oci, public_key=_verify(fail, value))
        else:
            meant = close_match(str(key), ARGS_KEYS)
            hint = f"; did you mean {meant!r}?" if meant is not None else ""  # single quotes: a klog message
            out.warnings.append(f"plugin {plugin}: unknown key {key!r} in args, ignored{hint}")
    if out.shared_instance:
        if "maxInstances" in raw and out.max_instances != 1:
            raise fail("sharedInstance requires maxInstances: 1")
        out.max_instances = 1
    _check_oci(fail, raw, out)
    for w in out.warnings:
        log.warning(w)
    return out


def _verify(fail: Any, value: object) -> Path:
    """`verify: {publicKey: PATH}`: the cosign public key the guest's signature must verify with."""
    if not isinstance(value, Mapping):
        raise fail(f"verify: expected an object with publicKey, got {json_type_name(value)}")
    for key in value:
        if key != "publicKey":
            raise fail(f'verify: unknown field "{key}" (expected publicKey)')
    if "publicKey" not in value:
        raise fail("verify.publicKey: required field is missing")
    text = _string(fail, "verify.publicKey", value["publicKey"])
    if not text:
        raise fail("verify.publicKey: must not be empty")
    return Path(text)


def _check_oci(fail: Any, raw: Mapping[str, Any], out: WasmPluginArgs) -> None:
    """The registry keys need an oci:// guestURL, and plain HTTP a loopback registry: credentials and
    modules sent in clear text over a network are for anyone on the path to read or replace."""
    if not is_oci(out.guest_url):
        for key in _OCI_KEYS:
            if key in raw:
                raise fail(f"{key}: only for an oci:// guestURL, got {out.guest_url!r}")
        return
    try:
        ref = parse_reference(out.guest_url)
    except BadReference as e:
        raise fail(f"guestURL: {e}") from None
    if out.oci.plain_http and not ref.is_loopback:
        raise fail(f"plainHTTP: registry {ref.registry!r} is not a loopback host (127.0.0.1, ::1, localhost); "
                   "use TLS (caFile for a private CA)")


def _string(fail: Any, key: str, value: object) -> str:
    if not isinstance(value, str):
        raise fail(f"{key}: expected a string, got {json_type_name(value)}")
    return value


def _int(fail: Any, key: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(f"{key}: expected an integer, got {json_type_name(value)}")
    if not lo <= value <= hi:
        raise fail(f"{key}: {value} is out of range [{lo}, {hi}]")
    return value


def _duration(fail: Any, key: str, value: object) -> tuple[float | None, str]:
    if not isinstance(value, str):
        raise fail(f'{key}: expected a duration string such as "250ms", got {json_type_name(value)}')
    try:
        nanos = parse_go_duration(value)
    except ValueError as e:
        raise fail(f"{key}: {e}") from None
    if nanos < 0:
        raise fail(f"{key}: must not be negative")
    return (None if nanos == 0 else nanos / 1e9), value


def _watch(fail: Any, value: object) -> tuple[GroupVersionResource, ...]:
    """`watch`: a list of {group, version, resource} (group "" is the core group); no duplicates."""
    if not isinstance(value, list):
        raise fail(f"watch: expected a list of {{group, version, resource}}, got {json_type_name(value)}")
    out: list[GroupVersionResource] = []
    for i, entry in enumerate(value):
        where = f"watch[{i}]"
        if not isinstance(entry, Mapping):
            raise fail(f"{where}: expected an object with group, version and resource, got {json_type_name(entry)}")
        for key in entry:
            if key not in _GVR_KEYS:
                raise fail(f'{where}: unknown field "{key}" (expected group, version and resource)')
        fields: dict[str, str] = {}
        for key in _GVR_KEYS:
            if key not in entry:
                raise fail(f"{where}.{key}: required field is missing")
            text = entry[key]
            if not isinstance(text, str):
                raise fail(f"{where}.{key}: expected a string, got {json_type_name(text)}")
            fields[key] = text
        group, version, resource = fields["group"], fields["version"], fields["resource"]
        if group and (len(group) > 253 or not all(_DNS_LABEL.match(p) for p in group.split("."))):
            raise fail(f'{where}.group: {group!r} is not an API group (a DNS subdomain, or "" for the core group)')
        if not _DNS_LABEL.match(version) or len(version) > 63:
            raise fail(f"{where}.version: {version!r} is not an API version (a DNS label such as \"v1\")")
        if not _DNS_LABEL.match(resource) or len(resource) > 63:
            raise fail(f"{where}.resource: {resource!r} is not a resource name (lower-case plural, "
                       'such as "namespaces")')
        gvr = GroupVersionResource(group, version, resource)
        if gvr in out:
            raise fail(f"{where}: duplicate of watch[{out.index(gvr)}] ({gvr})")
        out.append(gvr)
    return tuple(out)
