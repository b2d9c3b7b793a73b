"""The kubeconfig of a dev cluster: one cluster (its server and CA), one user (a bearer token), one context."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml

CONTEXT = "wasmsched-dev"


def kubeconfig_dict(server: str, ca_pem: bytes, token: str, user: str = "admin") -> dict[str, object]:
    # The CA is embedded, so the file keeps working when copied away from the cluster's directory.
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": {
            "server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": user}}],
        "current-context": CONTEXT,
        "preferences": {},
    }


def write_kubeconfig(path: Path, server: str, ca_file: Path, token: str, user: str = "admin") -> None:
    text = yaml.safe_dump(kubeconfig_dict(server, ca_file.read_bytes(), token, user), sort_keys=False)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds a credential
    with os.fdopen(fd, "w") as f:
        f.write(text)
