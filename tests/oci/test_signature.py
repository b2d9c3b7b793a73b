"""cosign key signatures (`verify: {publicKey}`): good, made with another key, missing, for another digest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.wasm.test_simulate_wasm import run_cli
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.loader import fetch_guest
from wasmsched.wasm.oci import cosign
from wasmsched.wasm.oci.reference import parse
from wasmsched.wasm.oci.registry import OCI_MANIFEST, Registry

from .conftest import RunningRegistry
from .helpers import EMPTY_GUEST, OTHER_GUEST, options, push_module


def write_keys(directory: Path, name: str) -> tuple[ec.EllipticCurvePrivateKey, Path, Path]:
    """A P-256 key pair as PEM files (the public one is what cosign.pub holds)."""
    key = ec.generate_private_key(ec.SECP256R1())
    private = directory / f"{name}.key"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    public = directory / f"{name}.pub"
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return key, private, public


def test_good_signature(oci_registry: RunningRegistry, oci_cache: Path, tmp_path: Path) -> None:
    key, _, public = write_keys(tmp_path, "cosign")
    pushed = push_module(oci_registry, "signed/good:v1", sign_key=key)
    assert pushed.signature_digest is not None
    # The layout cosign reads: the signature manifest under sha256-<hex>.sig, one simple-signing layer.
    reg = Registry(parse(oci_registry.ref("signed/good:v1")), options(oci_registry))
    sig = reg.get_manifest(cosign.signature_tag(pushed.manifest_digest)).json()
    (layer,) = sig["layers"]
    assert layer["mediaType"] == "application/vnd.dev.cosign.simplesigning.v1+json"
    payload = json.loads(reg.get_blob(layer["digest"], layer["size"]))
    assert payload == {"critical": {"identity": {"docker-reference": f"{oci_registry.host}/signed/good"},
                                    "image": {"docker-manifest-digest": pushed.manifest_digest},
                                    "type": "cosign container image signature"}, "optional": None}
    assert set(layer["annotations"]) == {"dev.cosignproject.cosign/signature"}

    url = oci_registry.ref("signed/good:v1")
    assert fetch_guest(url, oci=options(oci_registry, public_key=public)) == EMPTY_GUEST
    # By digest with the registry's signature cached: verified again, from the cache.
    by_digest = oci_registry.ref(f"signed/good@{pushed.manifest_digest}")
    assert fetch_guest(by_digest, oci=options(oci_registry, public_key=public)) == EMPTY_GUEST


def test_signature_by_another_key_is_refused(oci_registry: RunningRegistry, oci_cache: Path, tmp_path: Path) -> None:
    key, _, _ = write_keys(tmp_path, "signer")
    _, _, other_public = write_keys(tmp_path, "other")
    push_module(oci_registry, "signed/bad:v1", sign_key=key)
    url = oci_registry.ref("signed/bad:v1")
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=options(oci_registry, public_key=other_public))
    assert str(e.value) == f"wasm: error pulling guestURL {url}: signature does not verify with the public key"


def test_missing_signature_is_refused(oci_registry: RunningRegistry, oci_cache: Path, tmp_path: Path) -> None:
    _, _, public = write_keys(tmp_path, "cosign")
    pushed = push_module(oci_registry, "signed/missing:v1")
    url = oci_registry.ref("signed/missing:v1")
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=options(oci_registry, public_key=public))
    tag = "sha256-" + pushed.manifest_digest.removeprefix("sha256:") + ".sig"
    assert str(e.value) == f"wasm: error pulling guestURL {url}: no cosign signature: tag {tag} not found"


def test_signature_of_another_manifest_is_refused(oci_registry: RunningRegistry, oci_cache: Path,
                                                  tmp_path: Path) -> None:
    """A valid signature copied from another artifact: it verifies, but names another digest."""
    key, _, public = write_keys(tmp_path, "cosign")
    signed = push_module(oci_registry, "signed/copied:signed", OTHER_GUEST, sign_key=key)
    target = push_module(oci_registry, "signed/copied:v1")
    reg = Registry(parse(oci_registry.ref("signed/copied:v1")), options(oci_registry), "pull,push")
    sig = reg.get_manifest(cosign.signature_tag(signed.manifest_digest))
    reg.put_manifest(cosign.signature_tag(target.manifest_digest), sig.data, OCI_MANIFEST)
    url = oci_registry.ref("signed/copied:v1")
    with pytest.raises(WasmLoadError) as e:
        fetch_guest(url, oci=options(oci_registry, public_key=public))
    assert str(e.value) == (f"wasm: error pulling guestURL {url}: signature is for {signed.manifest_digest}, "
                            f"not for the pulled manifest {target.manifest_digest}")


def test_public_key_must_be_p256(oci_registry: RunningRegistry, oci_cache: Path, tmp_path: Path) -> None:
    push_module(oci_registry, "signed/keytype:v1")
    p384 = ec.generate_private_key(ec.SECP384R1()).public_key()
    path = tmp_path / "p384.pub"
    path.write_bytes(p384.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    with pytest.raises(WasmLoadError, match=f"public key {path}: not an ECDSA P-256 key"):
        fetch_guest(oci_registry.ref("signed/keytype:v1"), oci=options(oci_registry, public_key=path))


def test_signed_digest_loads_from_cache_with_the_registry_down(own_oci_registry: RunningRegistry, oci_cache: Path,
                                                               tmp_path: Path) -> None:
    """The verified signature is cached with the module and verified again, offline, on the next load."""
    key, _, public = write_keys(tmp_path, "cosign")
    _, _, other_public = write_keys(tmp_path, "other")
    pushed = push_module(own_oci_registry, "signed/offline:v1", sign_key=key)
    url = own_oci_registry.ref(f"signed/offline@{pushed.manifest_digest}")
    assert fetch_guest(url, oci=options(own_oci_registry, public_key=public)) == EMPTY_GUEST
    own_oci_registry.stop()
    assert fetch_guest(url, oci=options(own_oci_registry, public_key=public)) == EMPTY_GUEST
    # The cached signature is checked with the key given now, not trusted because it was cached.
    with pytest.raises(WasmLoadError, match="unreachable"):
        fetch_guest(url, oci=options(own_oci_registry, public_key=other_public))


def test_cli_push_signs_and_pull_verifies(oci_registry: RunningRegistry, oci_cache: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _, private, public = write_keys(tmp_path, "cosign")
    _, _, other_public = write_keys(tmp_path, "other")
    module = tmp_path / "m.wasm"
    module.write_bytes(OTHER_GUEST)
    url = oci_registry.ref("signed/cli:v1")
    registry_args = ("--plain-http", "--registry-config", str(oci_registry.config_json))
    rc, out, err = run_cli(capsys, "guest", "push", str(module), url, "--sign-key", str(private), *registry_args)
    assert rc == 0, err
    pushed, signed = out.splitlines()
    digest = pushed.rsplit("@", 1)[1]
    assert signed.startswith(f"signed {cosign.signature_tag(digest)}@sha256:")
    rc, out, err = run_cli(capsys, "guest", "pull", url, "-o", str(tmp_path / "out.wasm"), "--verify-key",
                           str(public), *registry_args)
    assert rc == 0, err
    assert (tmp_path / "out.wasm").read_bytes() == OTHER_GUEST
    rc, out, err = run_cli(capsys, "guest", "pull", url, "-o", str(tmp_path / "out.wasm"), "--verify-key",
                           str(other_public), *registry_args)
    assert (rc, err) == (1, f"error: {url}: signature does not verify with the public key\n")
