"""oras and wasmsched read each other's artifacts; Istio's and wasm-to-oci's layer types are pulled too."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from tests.wasm.test_simulate_wasm import run_cli
from wasmsched.wasm.oci.pull import pull

from .conftest import RunningRegistry
from .helpers import EMPTY_GUEST, OTHER_GUEST, options, run_oras


@pytest.mark.parametrize("media_type", ["application/wasm", "application/vnd.module.wasm.content.layer.v1+wasm"])
def test_oras_push_wasmsched_pull(oci_registry: RunningRegistry, oras: Path, oci_cache: Path, tmp_path: Path,
                                  media_type: str) -> None:
    (tmp_path / "plugin.wasm").write_bytes(OTHER_GUEST)
    repo = "interop/oras-" + media_type.rsplit("/", 1)[1].replace(".", "-").replace("+", "-")
    ref = f"{oci_registry.host}/{repo}:v1"
    run_oras(oras, oci_registry, "push", ref, f"plugin.wasm:{media_type}", cwd=tmp_path)
    data, digest = pull(oci_registry.ref(f"{repo}:v1"), options(oci_registry))
    assert data == OTHER_GUEST
    assert digest.startswith("sha256:")


def test_oras_push_with_the_wasm_artifact_config(oci_registry: RunningRegistry, oras: Path, oci_cache: Path,
                                                 tmp_path: Path) -> None:
    """The CNCF wasm artifact as oras pushes it: config application/vnd.wasm.config.v0+json."""
    (tmp_path / "plugin.wasm").write_bytes(EMPTY_GUEST)
    (tmp_path / "config.json").write_text('{"architecture":"wasm","os":"wasip1"}')
    ref = f"{oci_registry.host}/interop/cncf:v1"
    run_oras(oras, oci_registry, "push", "--config", "config.json:application/vnd.wasm.config.v0+json", ref,
             "plugin.wasm:application/wasm", cwd=tmp_path)
    assert pull(oci_registry.ref("interop/cncf:v1"), options(oci_registry))[0] == EMPTY_GUEST


def test_istio_compat_image_layer(oci_registry: RunningRegistry, oras: Path, oci_cache: Path, tmp_path: Path) -> None:
    """Istio's compat image: one tar+gzip layer holding plugin.wasm."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("plugin.wasm")
        info.size = len(OTHER_GUEST)
        tar.addfile(info, io.BytesIO(OTHER_GUEST))
    (tmp_path / "layer.tar.gz").write_bytes(gzip.compress(buf.getvalue()))
    ref = f"{oci_registry.host}/interop/istio:v1"
    run_oras(oras, oci_registry, "push", ref, "layer.tar.gz:application/vnd.oci.image.layer.v1.tar+gzip",
             cwd=tmp_path)
    assert pull(oci_registry.ref("interop/istio:v1"), options(oci_registry))[0] == OTHER_GUEST


def test_wasmsched_push_oras_pull(oci_registry: RunningRegistry, oras: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "lastdigit.wasm"
    module.write_bytes(OTHER_GUEST)
    url = oci_registry.ref("interop/wasmsched:v1")
    rc, out, err = run_cli(capsys, "guest", "push", str(module), url, "--plain-http",
                           "--registry-config", str(oci_registry.config_json))
    assert rc == 0, err
    assert out.startswith(f"pushed {url}@sha256:")
    digest = out.split("@", 1)[1].strip()
    manifest = run_oras(oras, oci_registry, "manifest", "fetch", f"{oci_registry.host}/interop/wasmsched:v1")
    assert '"artifactType":"application/vnd.wasm.config.v0+json"' in manifest
    assert '"mediaType":"application/wasm"' in manifest
    out_dir = tmp_path / "pulled"
    out_dir.mkdir()
    run_oras(oras, oci_registry, "pull", f"{oci_registry.host}/interop/wasmsched@{digest}", "-o", str(out_dir))
    assert (out_dir / "lastdigit.wasm").read_bytes() == OTHER_GUEST


def test_cli_pull_and_errors(oci_registry: RunningRegistry, tmp_path: Path, oci_cache: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "m.wasm"
    module.write_bytes(EMPTY_GUEST)
    url = oci_registry.ref("interop/cli:v1")
    cfg = str(oci_registry.config_json)
    assert run_cli(capsys, "guest", "push", str(module), url, "--plain-http", "--registry-config", cfg)[0] == 0
    out_file = tmp_path / "out.wasm"
    rc, out, err = run_cli(capsys, "guest", "pull", url, "-o", str(out_file), "--plain-http", "--registry-config", cfg)
    assert rc == 0, err
    assert out.startswith(f"pulled {url} (sha256:")
    assert out_file.read_bytes() == EMPTY_GUEST
    rc, _, err = run_cli(capsys, "guest", "pull", oci_registry.ref("interop/cli:nope"), "-o", str(out_file),
                           "--plain-http", "--registry-config", cfg)
    assert (rc, err) == (1, f"error: {oci_registry.ref('interop/cli:nope')}: manifest nope not found "
                            "(unknown tag or digest)\n")
    rc, _, err = run_cli(capsys, "guest", "push", str(module), "oci://registry.example.com/x:v1", "--plain-http")
    assert (rc, err) == (2, "error: oci://registry.example.com/x:v1: --plain-http is only for a loopback registry "
                            "(127.0.0.1, ::1, localhost)\n")
