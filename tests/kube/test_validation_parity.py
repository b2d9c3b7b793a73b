"""Validation parity with a real kube-apiserver: every bad manifest of the project's validation tests
(tests/e2e/test_bad_input.py MANIFESTS, tests/api/test_api_validation.py invalid_manifests) and a few good
ones are loaded by simulate's loader, created in the embedded cluster (its admission), and sent to the API
server as a server-side dry-run create (`?dryRun=All`, the YAML converted to JSON). The server rejects a
manifest exactly when the loader or the embedded cluster's admission does."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.api.test_api_validation import invalid_manifests
from tests.api.test_api_validation_controllers import controller_manifests
from tests.e2e.test_bad_input import MANIFESTS, NODE, pod
from wasmsched.api.errors import ApiError
from wasmsched.api.manifest import ManifestError, load_paths, load_text, manifest_files
from wasmsched.devcluster import DevCluster
from wasmsched.embedded.memory import AdmissionError, MemoryCluster, system_priority_classes
from wasmsched.kube.api import KubeApi

from .helpers import namespace_name

# Parse-level cases: the text never becomes an object, so there is nothing to send (kubectl fails the same
# way before any request: its YAML/JSON decoder refuses them).
PARSE_LEVEL = {
    "alias-bomb-name": "YAML alias expansion limit: the document is refused while parsing",
    "alias-bomb-namespace": "YAML alias expansion limit: the document is refused while parsing",
    "json-100000-deep": "JSON nesting depth limit: refused while parsing",
    "yaml-100000-deep": "YAML nesting depth limit: refused while parsing",
    "yaml-syntax": "not YAML",
    "duplicate-yaml-key": "a duplicate key is a strict-decoding error of the text; its object has one value",
    "duplicate-json-key": "a duplicate key is a strict-decoding error of the text; its object has one value",
}

# Where the loader deliberately differs; the test pins the difference (so either side changing shows).
KNOWN_DEVIATIONS = {
    # kube-apiserver parses quantities of any length (inf.Dec) and accepts a 5001-digit cpu request (it
    # even serializes 10^5000 back as "100": DecimalSI has no suffix for such exponents). wasmsched refuses
    # numerals above 4096 digits (wasmsched/api/quantity.py _MAX_MATERIALISED_DIGITS): Python cannot make
    # an int of them and no scheduler comparison needs them.
    "bad-input-huge-quantity": "server accepts, loader refuses: numerals above 4096 digits",
}

# Manifests both accept: the other half of "rejects exactly when".
NULL_CPU_NODE = NODE.replace("cpu: '1'", "cpu: null")
VALID: dict[str, tuple[str, str]] = {
    "valid-node": ("x.yaml", NODE),
    "valid-pod": ("x.yaml", pod()),
    "valid-null-cpu-node": ("x.yaml", NULL_CPU_NODE),  # kube decodes a null quantity as 0
    "valid-null-cpu-pod": ("x.yaml", pod(extra=", resources: {requests: {cpu: null}}")),
    "valid-pdb": ("x.yaml", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n"
                            "spec: {minAvailable: 1}\n"),
    "valid-priority-class": ("x.yaml", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                                       "metadata: {name: mid}\nvalue: 1000\n"),
}


def _cases() -> dict[str, tuple[str, str]]:
    cases = {f"bad-input-{k}": (name, text) for k, (name, text, _) in MANIFESTS.items() if k not in PARSE_LEVEL}
    cases.update({f"validation-{k}": ("x.yaml", text) for k, text in invalid_manifests().items()})
    cases.update(VALID)
    bad, good = controller_manifests()
    cases.update({f"validation-{k}": ("x.yaml", text) for k, text in bad.items()})
    cases.update({f"valid-{k}": ("x.yaml", text) for k, text in good.items()})
    return cases


CASES = _cases()


@contextlib.contextmanager
def _big_ints() -> Iterator[None]:
    # A 5000-digit number must reach the server as written (it answers with its own decode error); Python
    # refuses int<->str conversions above 4300 digits by default.
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)


def _to_object(name: str, text: str) -> dict[str, Any]:
    with _big_ints():
        obj = json.loads(text) if name.endswith(".json") else yaml.safe_load(text)
    assert isinstance(obj, dict), f"{name}: not one object"
    return obj


@pytest.fixture(scope="module")
def dry_run_namespace(dev_cluster: DevCluster) -> Iterator[str]:
    """One namespace for every case: a dry run stores nothing."""
    name = namespace_name("validation-parity")
    dev_cluster.create_namespace(name)
    yield name
    dev_cluster.delete_namespace(name)


DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _server_dry_run(api: KubeApi, api_resources: dict[tuple[str, str], tuple[str, bool]], namespace: str,
                    obj: dict[str, Any]) -> ApiError | None:
    """The server's refusal of a dry-run create of obj; None when it accepts it."""
    path, namespaced = api_resources[(obj["apiVersion"], obj["kind"])]
    prefix = ""
    if namespaced:
        meta = obj.setdefault("metadata", {}) or {}
        ns = meta.get("namespace") or "default"
        # Valid namespace names become the test's own (the value does not decide validity); an invalid one
        # is the case under test and goes as written.
        if DNS_LABEL.fullmatch(ns) and len(ns) <= 63:
            ns = namespace
            meta["namespace"] = ns
        prefix = f"namespaces/{ns}/"
    with _big_ints():
        body = json.loads(json.dumps(obj))  # what the client serializes
        try:
            api.request_json("POST", path.format(ns=prefix), body=body, query={"dryRun": "All"})
        except ApiError as e:
            return e
        return None


def _loader_error(name: str, text: str) -> tuple[str | None, AdmissionError | None]:
    """What simulate refuses of the manifest: (the loader's error, or the embedded cluster's admission's, or
    None; admission's refusal when it was admission)."""
    try:
        loaded = load_text(text, name)
    except ManifestError as e:
        return str(e), None
    cluster = MemoryCluster()
    for pc in system_priority_classes():  # what every API server has, as Simulation creates them
        cluster.create(pc)
    try:
        for obj in loaded.objects:
            cluster.create(obj.message)
    except AdmissionError as e:
        return str(e), e
    return None, None


@pytest.mark.parametrize("case", sorted(CASES))
def test_server_rejects_exactly_what_the_loader_rejects(
        dev_cluster: DevCluster, dry_run_namespace: str, api_resources: dict[tuple[str, str], tuple[str, bool]],
        case: str) -> None:
    name, text = CASES[case]
    loader, admission = _loader_error(name, text)
    with dev_cluster.kube_api() as api:
        refused = _server_dry_run(api, api_resources, dry_run_namespace, _to_object(name, text))
    assert refused is None or refused.status < 500, refused
    server = None if refused is None else f"HTTP {refused.status} {refused.reason}: {refused.message}"
    outcome = f"server: {server or 'accepted'}\nloader: {loader or 'accepted'}"
    if case in KNOWN_DEVIATIONS:
        assert server is None and loader is not None, outcome
        return
    assert (server is None) == (loader is None), outcome
    if admission is not None:
        assert refused is not None
        # Admission's refusals are kube's own: the message word for word, the code and the reason.
        assert refused.message == loader, outcome
        assert (admission.status, admission.reason) == (refused.status, refused.reason), outcome


def test_every_case_is_sent_or_excluded_with_a_reason() -> None:
    assert set(MANIFESTS) == {k.removeprefix("bad-input-") for k in CASES if k.startswith("bad-input-")} | set(
        PARSE_LEVEL)
    assert all(PARSE_LEVEL.values())


ROOT = Path(__file__).resolve().parents[2]
GOOD_DIRS = sorted([ROOT / "examples" / "clusters" / d.name for d in (ROOT / "examples" / "clusters").iterdir()
                    if d.is_dir()] + [d for d in (ROOT / "tests" / "e2e" / "scenarios").iterdir() if d.is_dir()])


@pytest.mark.parametrize("directory", GOOD_DIRS, ids=lambda d: d.name)
def test_every_object_the_loader_accepts_the_server_accepts(
        dev_cluster: DevCluster, dry_run_namespace: str, api_resources: dict[tuple[str, str], tuple[str, bool]],
        directory: Path) -> None:
    # A scenario's manifests are its cluster.yaml (its scheduler.yaml is the --config); an example cluster is
    # its whole directory.
    paths = [directory / "cluster.yaml"] if (directory / "cluster.yaml").exists() else [directory]
    load_paths(paths)  # the loader accepts them all
    docs = [d for f in manifest_files(paths) for d in yaml.safe_load_all(f.read_text()) if d]
    refused = []
    created: list[str] = []
    classes = "/apis/scheduling.k8s.io/v1/priorityclasses"
    with dev_cluster.kube_api() as api:
        try:
            # Priority admission resolves a pod's priorityClassName against stored classes: a dry run of
            # the class is not enough, so the directory's classes are stored for the duration.
            for d in docs:
                if d["kind"] == "PriorityClass":
                    api.request_json("POST", classes, body=d)
                    created.append(d["metadata"]["name"])
            for d in docs:
                if d["kind"] == "PriorityClass":
                    continue  # stored above: the server accepted it
                e = _server_dry_run(api, api_resources, dry_run_namespace, d)
                if e is not None:
                    refused.append(f"{d['kind']} {d['metadata'].get('name')}: HTTP {e.status}: {e.message}")
        finally:
            for name in created:
                api.request_json("DELETE", f"{classes}/{name}")
    assert refused == []
