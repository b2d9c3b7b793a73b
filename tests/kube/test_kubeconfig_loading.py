"""Where `snapshot` and `run` find their kubeconfig: `snapshot` as kubectl (--kubeconfig, $KUBECONFIG merged,
~/.kube/config, in-cluster), `run` as kube-scheduler (--kubeconfig or clientConnection.kubeconfig, --master,
in-cluster), which does not read $KUBECONFIG but says how to pass it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.go_guests import ROOT
from wasmsched.kube.api import ClientConfigError, load_configuration, load_kubectl_configuration


def kubeconfig(path: Path, *, clusters: dict[str, str], users: dict[str, str], contexts: dict[str, tuple[str, str]],
               current: str | None = None, ca: str = "") -> Path:
    """A kubeconfig: cluster name -> server, user name -> token, context name -> (cluster, user)."""
    doc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": s, **({"certificate-authority": ca} if ca else {})}}
                     for n, s in clusters.items()],
        "users": [{"name": n, "user": {"token": t}} for n, t in users.items()],
        "contexts": [{"name": n, "context": {"cluster": c, "user": u}} for n, (c, u) in contexts.items()],
    }
    if current is not None:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def no_cluster_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Not in a pod, no $KUBECONFIG, an empty home: nothing is found unless the test puts it there."""
    for k in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBECONFIG"):
        monkeypatch.delenv(k, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def token(cfg: Any) -> str:
    return str(cfg.api_key["BearerToken"]).removeprefix("Bearer ")


def test_kubeconfig_list_merges_first_file_wins(no_cluster_env: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # The first file names cluster "c" and user "u" and sets no current-context; the second names them
    # again (ignored), adds context "other", and is the first to set current-context; the third sets another.
    a = kubeconfig(tmp_path / "a", clusters={"c": "https://a.example:6443"}, users={"u": "token-a"},
                   contexts={"ctx": ("c", "u")})
    b = kubeconfig(tmp_path / "b", clusters={"c": "https://b.example:6443", "d": "https://d.example:6443"},
                   users={"u": "token-b"}, contexts={"ctx": ("d", "u"), "other": ("d", "u")}, current="ctx")
    c = kubeconfig(tmp_path / "c", clusters={"d": "https://d2.example:6443"}, users={"u": "token-c"},
                   contexts={"ctx": ("d", "u")}, current="other")
    missing = tmp_path / "missing"
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(missing), str(a), "", str(b), str(c)]))
    cfg = load_kubectl_configuration()
    # current-context "ctx" (b's; c's "other" comes later), whose definition is a's: cluster c, user u.
    assert cfg.host == "https://a.example:6443"
    assert token(cfg) == "token-a"
    assert cfg.retries is False


def test_kubeconfig_flag_wins_over_the_env_and_master_over_the_server(no_cluster_env: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    env = kubeconfig(tmp_path / "env", clusters={"c": "https://env:1"}, users={"u": "e"}, contexts={"x": ("c", "u")},
                     current="x")
    flag = kubeconfig(tmp_path / "flag", clusters={"c": "https://flag:1"}, users={"u": "f"},
                      contexts={"x": ("c", "u")}, current="x")
    monkeypatch.setenv("KUBECONFIG", str(env))
    assert load_kubectl_configuration(str(flag)).host == "https://flag:1"
    cfg = load_kubectl_configuration("", "https://master:2")
    assert (cfg.host, token(cfg)) == ("https://master:2", "e")


def test_home_kubeconfig_when_no_env(no_cluster_env: Path, tmp_path: Path) -> None:
    (no_cluster_env / ".kube").mkdir()
    kubeconfig(no_cluster_env / ".kube" / "config", clusters={"c": "https://home:1"}, users={"u": "h"},
               contexts={"x": ("c", "u")}, current="x")
    assert load_kubectl_configuration().host == "https://home:1"


def test_relative_certificate_paths_are_read_beside_their_file(no_cluster_env: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "dir"
    d.mkdir()
    (d / "ca.crt").write_text("not read until a request is made")
    k = kubeconfig(d / "config", clusters={"c": "https://x:1"}, users={"u": "t"}, contexts={"x": ("c", "u")},
                   current="x", ca="ca.crt")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "nothing"), str(k)]))
    assert load_kubectl_configuration().ssl_ca_cert == str(d / "ca.crt")


def test_kubectl_loading_errors_name_the_file_and_the_env(no_cluster_env: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    missing = str(tmp_path / "missing")
    monkeypatch.setenv("KUBECONFIG", missing)
    with pytest.raises(ClientConfigError) as e:
        load_kubectl_configuration()
    assert str(e.value).startswith(f'no --kubeconfig or --master given, no file $KUBECONFIG "{missing}" names exists')
    bad = tmp_path / "bad"
    bad.write_text("clusters: [\n")
    good = kubeconfig(tmp_path / "good", clusters={"c": "https://x:1"}, users={"u": "t"}, contexts={"x": ("c", "u")},
                      current="x")
    env = os.pathsep.join([str(good), str(bad)])
    monkeypatch.setenv("KUBECONFIG", env)
    with pytest.raises(ClientConfigError) as e:
        load_kubectl_configuration()
    assert str(e.value).startswith(f'kubeconfig "{bad}" (from $KUBECONFIG "{env}"): '), e.value
    monkeypatch.delenv("KUBECONFIG")
    with pytest.raises(ClientConfigError, match=r"no ~/\.kube/config, and not running in a cluster"):
        load_kubectl_configuration()


def test_run_does_not_read_kubeconfig_env_but_names_it(no_cluster_env: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    k = kubeconfig(tmp_path / "k", clusters={"c": "https://x:1"}, users={"u": "t"}, contexts={"x": ("c", "u")},
                   current="x")
    monkeypatch.setenv("KUBECONFIG", str(k))
    with pytest.raises(ClientConfigError) as e:
        load_configuration("", "")
    assert str(e.value).endswith('$KUBECONFIG is set, but kube-scheduler does not read it: '
                                 'pass --kubeconfig "$KUBECONFIG"'), e.value
    out = subprocess.run([sys.executable, "-m", "wasmsched", "run"], check=False, capture_output=True, text=True,
                         timeout=60, cwd=ROOT, env=dict(os.environ))
    assert out.returncode == 2, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert 'pass --kubeconfig "$KUBECONFIG"' in lines[0], out.stderr
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(k), str(k) + "2"]))
    with pytest.raises(ClientConfigError, match="pass --kubeconfig with one of the files it lists"):
        load_configuration("", "")


def test_snapshot_finds_the_cluster_through_kubeconfig_env(dev_cluster: Any, tmp_path: Path) -> None:
    """What `dev-cluster up` says to do, then `snapshot` without --kubeconfig."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_SERVICE")}
    env["KUBECONFIG"] = os.pathsep.join([str(tmp_path / "not-there"), str(dev_cluster.kubeconfig)])
    env["HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-m", "wasmsched", "snapshot", str(tmp_path / "out")], check=False,
                         capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("wrote "), out.stdout
    assert (tmp_path / "out" / "namespaces.yaml").exists()
