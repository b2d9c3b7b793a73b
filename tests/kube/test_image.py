"""The image, built for real as a user builds it: `make image` builds deploy/Containerfile with buildah
(vfs storage, chroot isolation, FROM a Debian base debootstrap makes: no container engine or image
registry needed) and runs it once as the Deployment does (user 65532: `wasmsched --version`, then
`simulate` with the bundled NodeNumber guest). Set-up installs buildah and debootstrap (make image-tools).
A few minutes cold (the base), about a minute once the base is in buildah's storage."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from wasmsched.cli.main import version_text

pytestmark = pytest.mark.kube

ROOT = Path(__file__).resolve().parents[2]


def _buildah(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["buildah", "--storage-driver", "vfs", *args], check=False, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def image_tag() -> Iterator[str]:
    tag = f"localhost/wasmsched:pytest-{os.getpid()}"
    yield tag
    _buildah("rmi", "--force", tag)


# Cold: debootstrap's base (about a minute) and pip's downloads; the timeout is make's, not a bound on speed.
@pytest.mark.timeout(1800)
def test_make_image_builds_the_containerfile_and_the_image_runs_wasmsched(image_tag: str) -> None:
    env = {**os.environ, "IMAGE": image_tag}
    env.pop("MAKEFLAGS", None)  # the outer `make test`'s jobserver is not this make's
    proc = subprocess.run(["nice", "make", "--no-print-directory", "image"], check=False, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1700)
    assert proc.returncode == 0, f"make image failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    out = proc.stdout.splitlines()
    # The version line printed by the image's own wasmsched: the same package versions as this checkout.
    assert version_text() in out, proc.stdout[-3000:]
    assert any(line.startswith("10 scheduled, 0 unschedulable") for line in out), proc.stdout[-3000:]
    assert "allocator: jemalloc" in out, proc.stdout[-3000:]  # preloaded by the Containerfile
    assert f"image: {image_tag} built and checked in" in proc.stderr

    inspected = _buildah("inspect", "--type", "image", image_tag)
    assert inspected.returncode == 0, inspected.stderr
    config = json.loads(inspected.stdout)["OCIv1"]["config"]
    # What deploy/deployment.yaml and the chart rely on: a numeric non-root user (runAsNonRoot), the
    # entrypoint, the serving port and the writable cache directory its emptyDir is mounted on.
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"] == ["wasmsched"]
    assert "10259/tcp" in config["ExposedPorts"]
    assert "WASMSCHED_CACHE_DIR=/var/cache/wasmsched" in config["Env"]
