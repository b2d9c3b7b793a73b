"""Helpers of the `wasmsched run` tests: objects as JSON through KubeApi, a `wasmsched run` process."""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any, TypeVar

from wasmsched.api.errors import is_not_found
from wasmsched.kube.api import ApiError, KubeApi, load_configuration

from .helpers import wait_for

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[2]


def kube_api(kubeconfig: str | Path) -> KubeApi:
    return KubeApi(load_configuration(str(kubeconfig)))


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def node_json(name: str, cpu: str = "4", memory: str = "16Gi", pods: str = "110",
              labels: dict[str, str] | None = None) -> dict[str, Any]:
    lab = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"}
    lab.update(labels or {})
    cap = {"cpu": cpu, "memory": memory, "pods": pods}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": lab, "annotations": {"kwok.x-k8s.io/node": "fake"}},
            "status": {"capacity": cap, "allocatable": cap}}


def pod_json(name: str, scheduler: str, cpu: str = "100m", memory: str = "100Mi", priority_class: str = "",
             labels: dict[str, str] | None = None, extra_spec: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        "terminationGracePeriodSeconds": 0,
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    spec.update(extra_spec or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def create(api: KubeApi, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    return api.request_json("POST", path, body=obj)  # type: ignore[no-any-return]


def create_node(api: KubeApi, node: dict[str, Any]) -> dict[str, Any]:
    out = create(api, "/api/v1/nodes", node)
    # A KWOK node's status as created is kept; the status subresource makes sure allocatable is there.
    api.request_json("PATCH", f"/api/v1/nodes/{node['metadata']['name']}/status",
                     body={"status": node["status"]}, content_type="application/merge-patch+json")
    return out


def create_pod(api: KubeApi, namespace: str, pod: dict[str, Any]) -> dict[str, Any]:
    return create(api, f"/api/v1/namespaces/{namespace}/pods", pod)


def get_pod(api: KubeApi, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        return api.request_json("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")  # type: ignore[no-any-return]
    except ApiError as e:
        if is_not_found(e):
            return None
        raise


def list_pods(api: KubeApi, namespace: str) -> list[dict[str, Any]]:
    return api.request_json("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]  # type: ignore[no-any-return]


def wait_bound(api: KubeApi, namespace: str, n: int, timeout: float = 30.0) -> dict[str, str]:
    """pod name -> node once n pods of the namespace are bound."""

    def check() -> dict[str, str] | None:
        b = bound_pods(api, namespace)
        return b if len(b) >= n else None

    return wait_for(f"{n} pods bound in {namespace}", check, timeout)


def events(api: KubeApi, namespace: str) -> list[dict[str, Any]]:
    return api.request_json("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")["items"]  # type: ignore[no-any-return]


def condition(pod: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next((c for c in pod.get("status", {}).get("conditions", []) if c["type"] == ctype), None)


def bound_pods(api: KubeApi, namespace: str) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in list_pods(api, namespace)
            if p["spec"].get("nodeName")}


def scheduler_config(path: Path, scheduler_name: str, *, lease: str = "", extra_profile: str = "",
                     plugin_config: str = "") -> Path:
    """A KubeSchedulerConfiguration with one profile; leader election on the given lease (off if none)."""
    le = (f"leaderElection:\n  leaderElect: true\n  resourceName: {lease}\n  resourceNamespace: kube-system\n"
          "  leaseDuration: 4s\n  renewDeadline: 3s\n  retryPeriod: 500ms\n") if lease else \
        "leaderElection:\n  leaderElect: false\n"
    text = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + le +
            f"profiles:\n- schedulerName: {scheduler_name}\n{extra_profile}")
    if plugin_config:
        text += plugin_config
    path.write_text(text)
    return path


class SchedulerProcess:
    """`wasmsched run` as a user starts it, stderr kept in a file."""

    def __init__(self, tmp: Path, kubeconfig: str | Path, config: Path | None, *extra: str,
                 name: str = "sched") -> None:
        self.log_path = tmp / f"{name}-{uuid.uuid4().hex[:4]}.log"
        argv = [sys.executable, "-m", "wasmsched", "run", "--kubeconfig", str(kubeconfig), "--secure-port", "0",
                "-v", "2"]
        if config is not None:
            argv += ["--config", str(config)]
        argv += list(extra)
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._log, env=env, cwd=REPO)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.proc.returncode


def https_get(url: str, cafile: Path | str, token: str | None = None) -> tuple[int, str]:
    """A GET that verifies the server with `cafile` (hostname included): (status, body)."""
    ctx = ssl.create_default_context(cafile=str(cafile))
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def dump(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True)[:4000]


class PodHistory:
    """Every version of every pod of a namespace, from a watch (what polling would miss: a condition
    written just before the pod is deleted)."""

    def __init__(self, api: KubeApi, namespace: str) -> None:
        import threading

        from wasmsched.api.kinds import RESOURCES

        self.api = api
        self.namespace = namespace
        self.versions: list[tuple[str, Any]] = []
        self._res = RESOURCES["Pod"]
        _, self._rv = api.list(self._res, namespace)
        self._stream: Any = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with self.api.watch(self._res, self._rv, timeout_seconds=300, namespace=self.namespace) as stream:
                self._stream = stream
                for ev in stream.events:
                    self.versions.append((ev.type, ev.object))
        except Exception:  # noqa: BLE001 - the watch ends when the test closes it
            return

    def of(self, name: str) -> list[Any]:
        return [o for t, o in self.versions if t != "BOOKMARK" and o.metadata.name == name]

    def close(self) -> None:
        if self._stream is not None:
            self._stream.shutdown()
        self._thread.join(5)


def lease(admin: KubeApi, name: str) -> dict[str, Any] | None:
    try:
        return admin.request_json("GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}")  # type: ignore[no-any-return]
    except ApiError as e:
        if is_not_found(e):
            return None
        raise


def scheduled_once(admin: KubeApi, namespace: str, names: list[str], proc: SchedulerProcess | None = None) -> None:
    """Every pod is bound and has exactly one Scheduled event (no pod was bound twice). `proc`: the
    scheduler whose log lines about events a failure shows."""
    bound = bound_pods(admin, namespace)
    assert sorted(bound) == sorted(names), (sorted(bound), sorted(names))

    def counts() -> dict[str, int]:
        out: dict[str, int] = {}
        for e in events(admin, namespace):
            if e["reason"] == "Scheduled":
                out[e["regarding"]["name"]] = out.get(e["regarding"]["name"], 0) + 1
        return out

    # Events are written in the background: wait until every pod has one, then look for doubles.
    try:
        wait_for("a Scheduled event for every pod", lambda: set(counts()) >= set(names) or None)
    except AssertionError as e:
        # its warnings, errors and tracebacks, and what it said about events
        lines = [ln for ln in (proc.log() if proc else "").splitlines()
                 if not ln.startswith("I") or "event" in ln.lower()]
        raise AssertionError(f"{e}; none for {sorted(set(names) - set(counts()))}; the scheduler's warnings, "
                             "errors and lines about events:\n" + "\n".join(lines[-40:])) from None
    assert counts() == dict.fromkeys(names, 1), counts()
