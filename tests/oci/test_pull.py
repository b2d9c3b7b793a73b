"""Pulling guests from a real registry (CNCF distribution): by tag and digest, the cache, and each error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wasmsched.wasm import loader
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.loader import fetch_guest
from wasmsched.wasm.oci.options import OciOptions
from wasmsched.wasm.oci.pull import pull, resolve
from wasmsched.wasm.oci.reference import parse
from wasmsched.wasm.oci.registry import OCI_INDEX, OCI_MANIFEST, Registry, sha256_digest

from .conftest import PASSWORD, USER, RunningRegistry, write_docker_config
from .helpers import EMPTY_GUEST, OTHER_GUEST, options, push_module


def test_pull_by_tag_and_by_digest(oci_registry: RunningRegistry, oci_cache: Path) -> None:
    pushed = push_module(oci_registry, "guests/empty:v1")
    data, digest = pull(oci_registry.ref("guests/empty:v1"), options(oci_registry))
    assert (data, digest) == (EMPTY_GUEST, pushed.manifest_digest)
    data, digest = pull(oci_registry.ref(f"guests/empty@{pushed.manifest_digest}"), options(oci_registry))
    assert (data, digest) == (EMPTY_GUEST, pushed.manifest_digest)
    # REPO:TAG@DIGEST: the digest decides, the tag is a label.
    data, _ = pull(oci_registry.ref(f"guests/empty:no-such-tag@{pushed.manifest_digest}"), options(oci_registry))
    assert data == EMPTY_GUEST
    # The layer and the manifest are cached by digest.
    assert (oci_cache / "blobs" / "sha256" / pushed.manifest_digest.removeprefix("sha256:")).is_file()


def test_resolve_follows_the_tag(oci_registry: RunningRegistry, oci_cache: Path) -> None:
    first = push_module(oci_registry, "guests/moving:v1")
    assert resolve(oci_registry.ref("guests/moving:v1"), options(oci_registry)) == first.manifest_digest
    second = push_module(oci_registry, "guests/moving:v1", OTHER_GUEST)
    assert second.manifest_digest != first.manifest_digest
    assert resolve(oci_registry.ref("guests/moving:v1"), options(oci_registry)) == second.manifest_digest
    # A pull by tag asks the registry again (the cached manifest of v1's first push is not used).
    assert pull(oci_registry.ref("guests/moving:v1"), options(oci_registry)) == (OTHER_GUEST, second.manifest_digest)


def test_fetch_guest_checks_guest_sha256_on_the_pulled_bytes(oci_registry: RunningRegistry, oci_cache: Path) -> None:
    push_module(oci_registry, "guests/pinned:v1")
    url = oci_registry.ref("guests/pinned:v1")
    good = sha256_digest(EMPTY_GUEST).removeprefix("sha256:")
    assert fetch_guest(url, good, oci=options(oci_registry)) == EMPTY_GUEST
    with pytest.raises(WasmLoadError, match=f"guestSHA256 mismatch for {url}"):
        fetch_guest(url, "0" * 64, oci=options(oci_registry))


def test_relative_registry_config_is_resolved_against_base_dir(oci_registry: RunningRegistry,
                                                               oci_cache: Path) -> None:
    push_module(oci_registry, "guests/relative:v1")
    base = oci_registry.config_json.parent.parent
    opts = OciOptions(plain_http=True, registry_config=Path("docker/config.json"))
    assert fetch_guest(oci_registry.ref("guests/relative:v1"), base_dir=base, oci=opts) == EMPTY_GUEST


def test_unknown_tag(oci_registry: RunningRegistry, oci_cache: Path) -> None:
    push_module(oci_registry, "guests/known:v1")
    url = oci_registry.ref("guests/known:nope")
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=options(oci_registry))
    assert str(e.value) == (f"wasm: error pulling guestURL {url}: manifest nope not found (unknown tag or digest)")


def test_wrong_password_is_refused(oci_registry: RunningRegistry, oci_cache: Path, tmp_path: Path) -> None:
    push_module(oci_registry, "guests/auth:v1")
    cfg = write_docker_config(tmp_path / "bad.json", oci_registry.host, USER, PASSWORD + "x")
    url = oci_registry.ref("guests/auth:v1")
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=OciOptions(plain_http=True, registry_config=cfg))
    assert str(e.value) == (f"wasm: error pulling guestURL {url}: access refused (401) with the credentials "
                            f"for {oci_registry.host} (registry config {cfg})")


def test_no_credentials_is_refused(oci_registry: RunningRegistry, oci_cache: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    url = oci_registry.ref("guests/auth:v1")
    with pytest.raises(WasmLoadError, match=f"^wasm: error pulling guestURL {url}: {oci_registry.host} asks for "
                       "credentials and there are none"):
        fetch_guest(url, oci=OciOptions(plain_http=True, registry_config=empty))


def test_credentials_from_docker_config_env(oci_registry: RunningRegistry, oci_cache: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """No registryConfig: $DOCKER_CONFIG/config.json, with username/password instead of auth."""
    push_module(oci_registry, "guests/env:v1")
    cfg = oci_registry.config_json.parent.parent / "env-docker"
    cfg.mkdir()
    (cfg / "config.json").write_text(json.dumps(
        {"auths": {f"http://{oci_registry.host}/v2/": {"username": USER, "password": PASSWORD}}}))
    monkeypatch.setenv("DOCKER_CONFIG", str(cfg))
    assert fetch_guest(oci_registry.ref("guests/env:v1"), oci=OciOptions(plain_http=True)) == EMPTY_GUEST


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


def test_tampered_blob_is_refused(oci_registry: RunningRegistry, oci_cache: Path) -> None:
    module = EMPTY_GUEST + b"\x00\x04name\x00"  # a custom section: a blob no other test pushes
    push_module(oci_registry, "guests/tampered-blob:v1", module)
    layer = sha256_digest(module)
    _flip_byte(oci_registry.blob_path(layer))
    url = oci_registry.ref("guests/tampered-blob:v1")
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=options(oci_registry))
    assert str(e.value).startswith(f"wasm: error pulling guestURL {url}: blob digest mismatch: expected {layer} ")


def test_tampered_manifest_is_refused(oci_registry: RunningRegistry, oci_cache: Path) -> None:
    module = EMPTY_GUEST + b"\x00\x05name2\x00"
    pushed = push_module(oci_registry, "guests/tampered-manifest:v1", module)
    path = oci_registry.blob_path(pushed.manifest_digest)
    # Still JSON, one byte different: a space before the closing brace.
    path.write_bytes(path.read_bytes()[:-1] + b" }")
    url = oci_registry.ref(f"guests/tampered-manifest@{pushed.manifest_digest}")
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=options(oci_registry))
    assert str(e.value).startswith(f"wasm: error pulling guestURL {url}: manifest digest mismatch: ")


def test_registry_down_digest_from_cache_tag_unreachable(own_oci_registry: RunningRegistry, oci_cache: Path) -> None:
    pushed = push_module(own_oci_registry, "guests/offline:v1")
    by_tag = own_oci_registry.ref("guests/offline:v1")
    by_digest = own_oci_registry.ref(f"guests/offline@{pushed.manifest_digest}")
    assert fetch_guest(by_digest, oci=options(own_oci_registry)) == EMPTY_GUEST
    own_oci_registry.stop()
    # A restart with the registry down: the digest's manifest and layer are in the cache.
    assert fetch_guest(by_digest, oci=options(own_oci_registry)) == EMPTY_GUEST
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(by_tag, oci=options(own_oci_registry))
    assert str(e.value).startswith(f"wasm: error pulling guestURL {by_tag}: registry {own_oci_registry.host} "
                                   "unreachable: ")
    assert "Connection refused" in str(e.value)
    assert "\n" not in str(e.value)


def test_no_wasm_layer(oci_registry: RunningRegistry, oci_cache: Path) -> None:
    reg = Registry(parse(oci_registry.ref("guests/text:v1")), options(oci_registry), "pull,push")
    text = b"not a module"
    empty_config = b"{}"
    reg.put_blob(text)
    reg.put_blob(empty_config)
    manifest = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                           "config": {"mediaType": "application/vnd.oci.empty.v1+json",
                                      "digest": sha256_digest(empty_config), "size": 2},
                           "layers": [{"mediaType": "text/plain", "digest": sha256_digest(text),
                                       "size": len(text)}]}).encode()
    reg.put_manifest("v1", manifest, OCI_MANIFEST)
    url = oci_registry.ref("guests/text:v1")
    with pytest.raises(WasmLoadError, match=rf"^wasm: error pulling guestURL {url}: no wasm layer \(layer media "
                       r"types: text/plain; accepted: application/wasm, "):
        fetch_guest(url, oci=options(oci_registry))


def test_index_picks_the_wasi_wasm_manifest(oci_registry: RunningRegistry, oci_cache: Path) -> None:
    wasm = push_module(oci_registry, "guests/multi:wasm", OTHER_GUEST)
    other = push_module(oci_registry, "guests/multi:other")
    reg = Registry(parse(oci_registry.ref("guests/multi:v1")), options(oci_registry), "pull,push")

    def entry(digest: str, os_: str, arch: str) -> dict[str, object]:
        size = len(oci_registry.blob_path(digest).read_bytes())
        return {"mediaType": OCI_MANIFEST, "digest": digest, "size": size,
                "platform": {"os": os_, "architecture": arch}}

    index = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
        entry(other.manifest_digest, "linux", "amd64"), entry(wasm.manifest_digest, "wasi", "wasm")]}).encode()
    index_digest = reg.put_manifest("v1", index, OCI_INDEX)
    assert pull(oci_registry.ref("guests/multi:v1"), options(oci_registry)) == (OTHER_GUEST, index_digest)


def test_layer_over_the_size_limit_is_refused_before_it_is_read(oci_registry: RunningRegistry, oci_cache: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    push_module(oci_registry, "guests/large:v1", OTHER_GUEST)
    monkeypatch.setattr(loader, "MAX_GUEST_BYTES", len(OTHER_GUEST) - 1)
    url = oci_registry.ref("guests/large:v1")
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=options(oci_registry))
    assert str(e.value) == (f"wasm: error pulling guestURL {url}: blob {sha256_digest(OTHER_GUEST)} is "
                            f"{len(OTHER_GUEST)} bytes, more than the limit of {len(OTHER_GUEST) - 1}")
