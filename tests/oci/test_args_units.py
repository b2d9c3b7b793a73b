"""The OCI args of docs/abi.md §9, references, config.json and challenges: no registry needed."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from wasmsched.wasm.args import decode_args
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.oci.auth import Credentials, load_credentials, parse_challenge
from wasmsched.wasm.oci.options import OciOptions
from wasmsched.wasm.oci.reference import BadReference, Reference, parse

DIGEST = "sha256:" + "ab" * 32


def test_decode_oci_args() -> None:
    args = decode_args("p", {"guestURL": "oci://127.0.0.1:5000/guests/x:v1", "plainHTTP": True,
                             "registryConfig": "docker.json", "caFile": "ca.pem",
                             "verify": {"publicKey": "cosign.pub"}})
    assert args.oci == OciOptions(plain_http=True, ca_file=Path("ca.pem"), registry_config=Path("docker.json"),
                                  public_key=Path("cosign.pub"))
    assert decode_args("p", {"guestURL": "oci://localhost/x"}).oci == OciOptions()


@pytest.mark.parametrize("host", ["registry.example.com", "10.0.0.1:5000", "[2001:db8::1]:5000", "127.example"])
def test_plain_http_refused_for_a_non_loopback_registry(host: str) -> None:
    with pytest.raises(WasmLoadError) as e:
        decode_args("wasmx", {"guestURL": f"oci://{host}/guests/x:v1", "plainHTTP": True})
    assert str(e.value).startswith(f"failed to decode into wasmx PluginConfig: plainHTTP: registry '{host}' is not "
                                   "a loopback host (127.0.0.1, ::1, localhost)")


@pytest.mark.parametrize("host", ["127.0.0.1:5000", "localhost:5000", "[::1]:5000", "127.0.0.2"])
def test_plain_http_allowed_for_loopback(host: str) -> None:
    assert decode_args("p", {"guestURL": f"oci://{host}/g/x:v1", "plainHTTP": True}).oci.plain_http


@pytest.mark.parametrize(("raw", "detail"), [
    ({"guestURL": "/x.wasm", "caFile": "ca.pem"}, "caFile: only for an oci:// guestURL, got '/x.wasm'"),
    ({"guestURL": "oci://r/x", "plainHTTP": "yes"}, "plainHTTP: expected a boolean, got string"),
    ({"guestURL": "oci://r/x", "verify": {"key": "k"}}, 'verify: unknown field "key" (expected publicKey)'),
    ({"guestURL": "oci://r/x", "verify": {}}, "verify.publicKey: required field is missing"),
    ({"guestURL": "oci://r/x", "verify": "k.pub"}, "verify: expected an object with publicKey, got string"),
    ({"guestURL": "oci://r/Upper:v1"}, "guestURL: repository 'Upper' is not valid"),
])
def test_oci_arg_errors(raw: dict[str, object], detail: str) -> None:
    with pytest.raises(WasmLoadError) as e:
        decode_args("p", raw)
    assert str(e.value).startswith(f"failed to decode into p PluginConfig: {detail}")


@pytest.mark.parametrize(("url", "want"), [
    ("oci://ghcr.io/org/guests/x:v1", Reference("ghcr.io", "org/guests/x", "v1")),
    ("oci://localhost:5000/x", Reference("localhost:5000", "x", "latest")),
    (f"oci://r.io/x@{DIGEST}", Reference("r.io", "x", None, DIGEST)),
    (f"oci://r.io/x:v2@{DIGEST}", Reference("r.io", "x", "v2", DIGEST)),
    ("OCI://[::1]:5000/a/b:c", Reference("[::1]:5000", "a/b", "c")),
])
def test_parse_reference(url: str, want: Reference) -> None:
    ref = parse(url)
    assert ref == want
    assert ref.selector == (want.digest or want.tag)


@pytest.mark.parametrize("url", ["oci://r.io", "oci://r.io/", "oci://r.io/x@sha256:12", "oci://r.io/x:bad tag",
                                 "oci://bad_host/x", "http://r.io/x"])
def test_bad_references(url: str) -> None:
    with pytest.raises(BadReference):
        parse(url)


def test_loopback() -> None:
    assert parse("oci://[::1]:5000/x").host == "::1"
    assert parse("oci://[::1]:5000/x").is_loopback
    assert not parse("oci://example.com:5000/x").is_loopback


def test_credentials_from_config_json(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    auth = base64.b64encode(b"u:p:with:colons").decode()
    path.write_text(json.dumps({"auths": {"https://reg.example:5000/v1/": {"auth": auth},
                                          "https://index.docker.io/v1/": {"username": "hub", "password": "pw"},
                                          "helper.example": {}},
                                "credsStore": "desktop"}))
    assert load_credentials("reg.example:5000", path) == Credentials("u", "p:with:colons")
    assert load_credentials("docker.io", path) == Credentials("hub", "pw")
    assert load_credentials("helper.example", path) is None  # a credential helper's entry: not inline
    assert load_credentials("other.example", path) is None
    with pytest.raises(FileNotFoundError):
        load_credentials("reg.example:5000", tmp_path / "missing.json")


def test_parse_challenge() -> None:
    c = parse_challenge('Bearer realm="https://auth.example/token",service="registry.example",'
                        'scope="repository:a/b:pull"')
    assert c is not None
    assert (c.scheme, c.params) == ("bearer", {"realm": "https://auth.example/token", "service": "registry.example",
                                               "scope": "repository:a/b:pull"})
    basic = parse_challenge('Basic realm="x"')
    assert basic is not None
    assert basic.scheme == "basic"
