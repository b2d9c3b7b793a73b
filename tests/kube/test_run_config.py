"""`wasmsched run`'s configuration: flags over the file, the client configuration it picks."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.go_guests import ROOT
from wasmsched.api.kinds import RESOURCES
from wasmsched.cli.run import add_arguments, leader_election_dict
from wasmsched.config import load_config
from wasmsched.kube.api import ClientConfigError, KubeApi, load_configuration
from wasmsched.kube.leaderelection import LeaderElectionConfig


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(list(argv))


def test_leader_elect_flags_override_the_file(tmp_path: Path) -> None:
    cfg_file = tmp_path / "cfg.yaml"
    cfg_file.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                        "leaderElection:\n  leaderElect: true\n  leaseDuration: 30s\n  renewDeadline: 20s\n"
                        "  resourceName: from-file\n")
    cfg = load_config(str(cfg_file))
    args = parse("--config", str(cfg_file), "--leader-elect-lease-duration", "9s", "--leader-elect-renew-deadline",
                 "6s", "--leader-elect-resource-namespace", "other")
    le = LeaderElectionConfig.from_dict(leader_election_dict(cfg, args))
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (9.0, 6.0, 2.0)
    assert (le.resource_name, le.resource_namespace, le.leader_elect) == ("from-file", "other", True)
    off = LeaderElectionConfig.from_dict(leader_election_dict(cfg, parse("--leader-elect=false")))
    assert not off.leader_elect
    # kube-scheduler's defaults when neither says anything
    d = LeaderElectionConfig.from_dict(leader_election_dict(load_config(None), parse()))
    assert (d.leader_elect, d.lease_duration, d.renew_deadline, d.retry_period, d.resource_namespace,
            d.resource_name) == (True, 15.0, 10.0, 2.0, "kube-system", "kube-scheduler")


def test_bad_leader_election_flags_exit_2_naming_the_field(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "wasmsched", "run", "--master", "https://127.0.0.1:1",
                          "--leader-elect-lease-duration", "5s", "--leader-elect-renew-deadline", "8s"],
                         check=False, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2, out.stderr
    assert "leaderElection.leaseDuration" in out.stderr and "must be greater than `RenewDeadline`" in out.stderr
    assert "Traceback" not in out.stderr


def test_without_kubeconfig_or_master_outside_a_cluster_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    with pytest.raises(ClientConfigError, match="not running in a cluster"):
        load_configuration("", "")
    out = subprocess.run([sys.executable, "-m", "wasmsched", "run"], check=False, capture_output=True, text=True,
                         timeout=60, cwd=ROOT,
                         env={k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_SERVICE")})
    assert out.returncode == 2 and "pass --kubeconfig" in out.stderr, out.stderr


def test_in_cluster_configuration_reaches_the_server(dev_cluster: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a pod: the service host and port from the environment, the ServiceAccount's token and CA from
    their files (here the admin token, and the files' paths pointed at tmp)."""
    from kubernetes.config import incluster_config

    host, port = dev_cluster.server.removeprefix("https://").rsplit(":", 1)
    token = tmp_path / "token"
    token.write_text(dev_cluster.admin_token)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(dev_cluster.ca_file))
    api = KubeApi(load_configuration("", ""))
    try:
        namespaces, rv = api.list(RESOURCES["Namespace"])
        assert rv and "kube-system" in {n.metadata.name for n in namespaces}
    finally:
        api.close()


@pytest.mark.parametrize(("make", "expected"), [
    (lambda tmp: ["--kubeconfig", str(tmp / "missing"), str(tmp / "out")],
     'error: kubeconfig "{tmp}/missing": no such file'),
    (lambda tmp: ["--master", "https://127.0.0.1:1", str(tmp / "file")],
     "error: snapshot DIR {tmp}/file: not a directory"),
])
def test_snapshot_bad_input_exits_2_naming_it(tmp_path: Path, make: Any, expected: str) -> None:
    (tmp_path / "file").write_text("x")
    out = subprocess.run([sys.executable, "-m", "wasmsched", "snapshot", *make(tmp_path)], check=False,
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == expected.format(tmp=tmp_path)
    assert not (tmp_path / "out").exists()


def test_snapshot_of_an_unreachable_server_exits_1_naming_it(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "wasmsched", "snapshot", "--master", "https://127.0.0.1:1",
                          str(tmp_path / "out")], check=False, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 1, out.stderr
    assert out.stderr.startswith("error: https://127.0.0.1:1: GET https://127.0.0.1:1/api/v1/namespaces"), out.stderr
    assert "Traceback" not in out.stderr
