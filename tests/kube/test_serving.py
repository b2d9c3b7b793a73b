"""The secure port against a real kube-apiserver: delegated authentication (TokenReview) and
authorization (SubjectAccessReview), health endpoints without a token, /metrics for whom RBAC allows,
and an unreachable API server failing requests cleanly."""

from __future__ import annotations

import json
import logging
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from prometheus_client import CollectorRegistry, Counter

from wasmsched.api.errors import ApiError, is_not_found
from wasmsched.devcluster import DevCluster
from wasmsched.kube.api import ClientConnection, KubeApi
from wasmsched.kube.delegatedauth import DelegatingAuthenticator, DelegatingAuthorizer
from wasmsched.kube.serving import SecureServer

from .helpers import wait_for


@dataclass
class Reply:
    status: int
    body: str
    content_type: str

    def json(self) -> Any:
        return json.loads(self.body)


def _get(server: SecureServer, path: str, token: str | None = None, cafile: Path | None = None) -> Reply:
    ctx = ssl.create_default_context(cafile=str(cafile)) if cafile else ssl._create_unverified_context()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(server.url + path, headers=headers)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=60) as resp:
            return Reply(resp.status, resp.read().decode(), resp.headers.get("Content-Type", ""))
    except urllib.error.HTTPError as e:
        return Reply(e.code, e.read().decode(), e.headers.get("Content-Type", ""))


class Readiness:
    """A readyz check the test switches: None is ready, a string the reason it is not."""

    def __init__(self) -> None:
        self.reason: str | None = None

    def __call__(self) -> str | None:
        return self.reason


@pytest.fixture
def readiness() -> Readiness:
    return Readiness()


@pytest.fixture
def registry() -> CollectorRegistry:
    reg = CollectorRegistry()
    Counter("wasmsched_test_requests", "A counter of the test's own registry.", registry=reg).inc(3)
    return reg


@pytest.fixture
def server(dev_cluster: DevCluster, registry: CollectorRegistry, readiness: Readiness,
           tmp_path: Path) -> Iterator[SecureServer]:
    api = dev_cluster.kube_api()
    srv = SecureServer("127.0.0.1", 0, api=api, registry=registry,
                       checks={"readyz": {"sched-handler-sync": readiness}}, cert_dir=str(tmp_path / "certs"))
    srv.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        api.close()


RBAC = "/apis/rbac.authorization.k8s.io/v1"


def _forbidden(user: str, path: str = "/metrics") -> str:
    return f'forbidden: User "{user}" cannot get path "{path}"'


def test_health_paths_answer_without_a_token_over_verified_tls(server: SecureServer, tmp_path: Path) -> None:
    # the generated certificate bundle holds its CA: a client trusting it verifies 127.0.0.1
    cafile = tmp_path / "certs" / "kube-scheduler.crt"
    for path in ("/healthz", "/livez", "/readyz"):
        r = _get(server, path, cafile=cafile)
        assert (r.status, r.body, r.content_type) == (200, "ok", "text/plain; charset=utf-8"), path
    r = _get(server, "/readyz?verbose", cafile=cafile)
    assert (r.status, r.body) == (200, "[+]sched-handler-sync ok\nreadyz check passed\n")


def test_readyz_fails_while_a_check_fails(server: SecureServer, readiness: Readiness,
                                          dev_cluster: DevCluster) -> None:
    readiness.reason = "handlers are not fully synchronized"
    r = _get(server, "/readyz")
    assert (r.status, r.body) == (500, "[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n")
    # the single check is not an always-allowed path; the admin sees its reason
    r = _get(server, "/readyz/sched-handler-sync", dev_cluster.admin_token)
    assert (r.status, r.body) == (500, "internal server error: handlers are not fully synchronized\n")
    assert _get(server, "/healthz").status == 200  # liveness is not readiness
    readiness.reason = None
    assert (_get(server, "/readyz").status, _get(server, "/readyz").body) == (200, "ok")


def test_metrics_for_the_admin(server: SecureServer, dev_cluster: DevCluster) -> None:
    r = _get(server, "/metrics", dev_cluster.admin_token)
    assert r.status == 200
    assert "wasmsched_test_requests_total 3.0" in r.body
    assert r.content_type.startswith("text/plain; version=")


def test_invalid_token_is_401_and_no_token_is_anonymous(server: SecureServer) -> None:
    r = _get(server, "/metrics", "not-a-token")
    assert (r.status, r.content_type) == (401, "application/json")
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    # kube-scheduler's delegated authentication allows anonymous requests; RBAC then refuses them
    r = _get(server, "/metrics")
    assert r.status == 403
    assert r.json()["message"] == _forbidden("system:anonymous")


def test_no_token_is_401_when_anonymous_is_disabled(dev_cluster: DevCluster, tmp_path: Path) -> None:
    """What `wasmsched run` serves: /metrics refuses a request without a token; probes (no token) still
    get the health paths."""
    with dev_cluster.kube_api() as api:
        srv = SecureServer("127.0.0.1", 0, api=api, anonymous=False)
        srv.start()
        try:
            assert _get(srv, "/metrics").status == 401
            assert _get(srv, "/healthz/ping").status == 401  # not an always-allowed path
            for path in ("/healthz", "/livez", "/readyz"):
                assert _get(srv, path).status == 200
        finally:
            srv.shutdown()


def test_restricted_user_is_forbidden(server: SecureServer, dev_cluster: DevCluster) -> None:
    r = _get(server, "/metrics", dev_cluster.restricted_token)
    assert (r.status, r.content_type) == (403, "application/json")
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": _forbidden("restricted"), "reason": "Forbidden", "details": {}, "code": 403}
    # health paths need no permission, even for an authenticated user without any
    assert _get(server, "/healthz", dev_cluster.restricted_token).status == 200
    # an unknown path is authorized first, as kube's handler chain does
    assert _get(server, "/nope", dev_cluster.restricted_token).status == 403
    assert _get(server, "/nope", dev_cluster.admin_token).status == 404


@dataclass
class MetricsReader:
    """A ServiceAccount bound to a ClusterRole allowing `get` on /metrics, and a token of it."""

    namespace: str
    account: str
    binding: str
    token: str


@pytest.fixture
def metrics_reader(dev_cluster: DevCluster, namespace: str) -> Iterator[MetricsReader]:
    name = f"metrics-reader-{namespace}"
    with dev_cluster.kube_api() as api:
        api.request_json("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", body={
            "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "prometheus"}})
        api.request_json("POST", f"{RBAC}/clusterroles", body={
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]})
        try:
            api.request_json("POST", f"{RBAC}/clusterrolebindings", body={
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": namespace}]})
            token = api.request_json("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/prometheus/token", body={
                "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": 600}})["status"]["token"]
            yield MetricsReader(namespace, "prometheus", name, token)
        finally:
            for collection in ("clusterrolebindings", "clusterroles"):
                try:
                    api.request_json("DELETE", f"{RBAC}/{collection}/{name}")
                except ApiError as e:
                    if not is_not_found(e):
                        raise


def test_service_account_allowed_by_rbac_reads_metrics(server: SecureServer, metrics_reader: MetricsReader) -> None:
    r = _get(server, "/metrics", metrics_reader.token)
    assert r.status == 200
    assert "wasmsched_test_requests_total 3.0" in r.body
    # the role covers /metrics only
    r = _get(server, "/readyz/sched-handler-sync", metrics_reader.token)
    assert r.status == 403
    user = f"system:serviceaccount:{metrics_reader.namespace}:prometheus"
    assert r.json()["message"] == _forbidden(user, "/readyz/sched-handler-sync")


def test_reviews_are_cached_within_their_ttl(dev_cluster: DevCluster, metrics_reader: MetricsReader,
                                             registry: CollectorRegistry) -> None:
    """kube caches TokenReview answers and SubjectAccessReview decisions (10 s each by default): a
    revoked token or permission keeps working until its entry expires. A long TTL here keeps the test
    free of timing; a TTL of 0 shows the revocation."""
    with dev_cluster.kube_api() as api:
        cached = SecureServer("127.0.0.1", 0, registry=registry,
                              authenticator=DelegatingAuthenticator(api, cache_ttl=600),
                              authorizer=DelegatingAuthorizer(api, allow_cache_ttl=600, deny_cache_ttl=600))
        uncached = SecureServer("127.0.0.1", 0, registry=registry,
                                authenticator=DelegatingAuthenticator(api, cache_ttl=0),
                                authorizer=DelegatingAuthorizer(api, allow_cache_ttl=0, deny_cache_ttl=0))
        cached.start()
        uncached.start()
        try:
            assert _get(cached, "/metrics", metrics_reader.token).status == 200
            assert _get(uncached, "/metrics", metrics_reader.token).status == 200
            # revoke the permission: the cached decision stands, a fresh review forbids
            api.request_json("DELETE", f"{RBAC}/clusterrolebindings/{metrics_reader.binding}")
            wait_for("the permission to be revoked", lambda: _get(uncached, "/metrics", metrics_reader.token).status
                     == 403)
            assert _get(cached, "/metrics", metrics_reader.token).status == 200
            # revoke the token: the cached authentication stands, a fresh review rejects it
            api.request_json("DELETE", f"/api/v1/namespaces/{metrics_reader.namespace}/serviceaccounts/"
                                       f"{metrics_reader.account}")
            wait_for("the token to be rejected", lambda: _get(uncached, "/metrics", metrics_reader.token).status
                     == 401)
            assert _get(cached, "/metrics", metrics_reader.token).status == 200
        finally:
            cached.shutdown()
            uncached.shutdown()


def test_unreachable_api_server_fails_the_request_with_a_log_line(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    conf = client.Configuration()
    conf.host = "https://127.0.0.1:1"  # nothing listens on port 1
    conf.verify_ssl = False
    conf.api_key = {"BearerToken": "Bearer x"}
    with KubeApi(conf, ClientConnection(qps=0)) as api, caplog.at_level(logging.INFO, logger="wasmsched"):
        srv = SecureServer("127.0.0.1", 0, api=api)
        srv.start()
        try:
            r = _get(srv, "/metrics", "some-token")
            assert r.status == 500
            assert r.body.startswith('Internal Server Error: "/metrics": TokenReview: ')
            r = _get(srv, "/metrics")  # anonymous: the SubjectAccessReview fails
            assert r.status == 500
            assert r.body.startswith('Internal Server Error: "/metrics": SubjectAccessReview: ')
            assert _get(srv, "/healthz").status == 200  # needs neither review
        finally:
            srv.shutdown()
    messages = [rec.getMessage() for rec in caplog.records]
    assert any(m.startswith('"Unable to authenticate the request" err="TokenReview: ') for m in messages)
    assert any(m.startswith('"Unable to authorize the request" user="system:anonymous"') for m in messages)
    assert "Traceback" not in capfd.readouterr().err
