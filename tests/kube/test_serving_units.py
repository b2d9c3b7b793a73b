"""Pure logic of the secure port: certificates, health rendering, bearer tokens, caches and the
always-allowed paths and groups (no API server involved; tests/kube/test_serving.py covers that)."""

from __future__ import annotations

import ipaddress
import os
import ssl
import stat
from pathlib import Path
from typing import Any, cast

import pytest
import urllib3
from cryptography import x509
from cryptography.x509.oid import NameOID
from kubernetes import client as kclient

from wasmsched.api.errors import ApiError, StatusDetails, TransportError
from wasmsched.kube.api import ClientConnection, KubeApi
from wasmsched.kube.delegatedauth import (
    ANONYMOUS,
    DelegatingAuthenticator,
    DelegatingAuthorizer,
    ReviewError,
    TTLCache,
    UserInfo,
    WebhookBackoff,
    _should_retry,
    bearer_token,
    review_client,
)
from wasmsched.kube.healthz import root_health, single_health, with_ping
from wasmsched.kube.serving import SecureServer
from wasmsched.kube.servingcert import (
    CertificateError,
    ServingCertOptions,
    generate_self_signed_cert_key,
    server_ssl_context,
)


def _nowhere(connection: ClientConnection | None = None) -> KubeApi:
    return KubeApi(kclient.Configuration(host="https://127.0.0.1:1"), connection)


def _certs(pem: bytes) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(pem)


def _cn(name: x509.Name) -> str:
    return str(name.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value)


def test_self_signed_cert_is_signed_by_its_own_ca_for_the_host_and_alternates() -> None:
    cert_pem, key_pem = generate_self_signed_cert_key("localhost", ["127.0.0.1", "10.0.0.7"], ["sched.local"])
    cert, ca = _certs(cert_pem)
    assert _cn(cert.subject).startswith("localhost@")
    assert _cn(ca.subject).startswith("localhost-ca@")
    assert cert.issuer == ca.subject
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost", "sched.local"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1"),
                                                        ipaddress.ip_address("10.0.0.7")]
    cert.verify_directly_issued_by(ca)
    assert b"RSA PRIVATE KEY" in key_pem


def test_cert_dir_generates_once_then_reuses(tmp_path: Path) -> None:
    opts = ServingCertOptions(cert_dir=str(tmp_path / "certs"))
    server_ssl_context(opts, "127.0.0.1")
    crt, key = tmp_path / "certs" / "kube-scheduler.crt", tmp_path / "certs" / "kube-scheduler.key"
    first = crt.read_bytes()
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    # the bind address is among the certificate's IPs (MaybeDefaultWithSelfSignedCerts)
    server_ssl_context(opts, "127.0.0.1")
    assert crt.read_bytes() == first


def test_unspecified_bind_address_adds_localhost_and_a_specific_one_its_ip(tmp_path: Path) -> None:
    for bind, want_ip in (("0.0.0.0", None), ("127.0.0.2", "127.0.0.2")):
        d = tmp_path / bind
        server_ssl_context(ServingCertOptions(cert_dir=str(d)), bind)
        cert = _certs((d / "kube-scheduler.crt").read_bytes())[0]
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        ips = [str(i) for i in san.get_values_for_type(x509.IPAddress)]
        assert "localhost" in san.get_values_for_type(x509.DNSName)
        if want_ip:
            assert want_ip in ips


def test_given_cert_files_are_used_and_must_come_in_pairs(tmp_path: Path) -> None:
    cert_pem, key_pem = generate_self_signed_cert_key("localhost", [], [])
    (tmp_path / "a.crt").write_bytes(cert_pem)
    (tmp_path / "a.key").write_bytes(key_pem)
    ctx = server_ssl_context(ServingCertOptions(cert_file=str(tmp_path / "a.crt"), key_file=str(tmp_path / "a.key")),
                             "127.0.0.1")
    assert isinstance(ctx, ssl.SSLContext)
    assert not (tmp_path / "kube-scheduler.crt").exists()
    with pytest.raises(CertificateError, match="both a cert file and a key file"):
        server_ssl_context(ServingCertOptions(cert_file=str(tmp_path / "a.crt")), "127.0.0.1")
    crt = str(tmp_path / "a.crt")
    with pytest.raises(CertificateError, match=r"missing\.key: cannot read"):
        server_ssl_context(ServingCertOptions(cert_file=crt, key_file=str(tmp_path / "missing.key")), "127.0.0.1")
    (tmp_path / "b.key").write_bytes(b"not a key")
    with pytest.raises(CertificateError, match="not a valid certificate and key pair"):
        server_ssl_context(ServingCertOptions(cert_file=crt, key_file=str(tmp_path / "b.key")), "127.0.0.1")


def test_root_health_ok_verbose_and_failure_as_kube_renders_them() -> None:
    reason: list[str | None] = [None]
    checks = {"leaderElection": lambda: None, "sched-handler-sync": lambda: reason[0]}
    assert root_health("readyz", checks, {}).body == "ok"
    verbose = root_health("readyz", checks, {"verbose": [""]})
    assert (verbose.status, verbose.body) == (
        200, "[+]leaderElection ok\n[+]sched-handler-sync ok\nreadyz check passed\n")
    reason[0] = "handlers are not fully synchronized"
    failed = root_health("readyz", checks, {})
    # the reason goes to the log only
    assert (failed.status, failed.body) == (
        500, "[+]leaderElection ok\n[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n")


def test_root_health_exclude_and_unknown_exclude() -> None:
    checks = {"a": lambda: "down", "b": lambda: None}
    r = root_health("healthz", checks, {"exclude": ["a", "zz"], "verbose": [""]})
    assert r.status == 200
    assert r.body == ('[+]a excluded: ok\n[+]b ok\nwarn: some health checks cannot be excluded: no matches for "zz"\n'
                      "healthz check passed\n")


def test_a_raising_check_fails_instead_of_escaping() -> None:
    def boom() -> str | None:
        raise RuntimeError("informer gone")

    assert root_health("livez", {"x": boom}, {}).status == 500
    one = single_health(boom)
    assert (one.status, one.body) == (500, "internal server error: RuntimeError: informer gone\n")
    assert single_health(lambda: None).body == "ok"


def test_no_checks_means_ping() -> None:
    assert list(with_ping(None)) == ["ping"]
    assert list(with_ping({"x": lambda: None})) == ["x"]


@pytest.mark.parametrize(
    ("header", "token"),
    [(None, None), ("", None), ("Bearer abc", "abc"), ("bearer abc", "abc"), ("Basic abc", None),
     ("Bearer", None), ("Bearer  abc", None), ("Bearer abc def", "abc")],
)
def test_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_ttl_cache_expires_and_stays_bounded() -> None:
    now = [100.0]
    cache: TTLCache[str] = TTLCache(max_entries=2, clock=lambda: now[0])
    cache.put("a", "1", 10)
    assert cache.get("a") == "1"
    now[0] = 110.0
    assert cache.get("a") is None
    cache.put("a", "1", 10)
    cache.put("b", "2", 10)
    cache.put("c", "3", 10)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, "2", "3")


def test_always_allowed_paths_and_groups_need_no_review() -> None:
    # the client points nowhere: a review would fail, so these decisions are made locally
    z = DelegatingAuthorizer(_nowhere(), always_allow_paths=("/healthz", "/readyz", "/livez", "/debug/*"))
    assert z.authorize(ANONYMOUS, "get", "/healthz").allowed
    assert z.authorize(ANONYMOUS, "get", "/debug/pprof/heap").allowed
    assert not z.path_always_allowed("/healthz/ping")  # exact paths do not cover sub-paths, as in kube
    admin = UserInfo("admin", groups=("system:masters", "system:authenticated"))
    assert z.authorize(admin, "get", "/metrics").allowed


def _reset() -> TransportError:
    """A broken connection as KubeApi reports it: urllib3's error around the socket's, as the cause."""
    try:
        raise urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError(104, "reset by peer"))
    except urllib3.exceptions.ProtocolError as e:
        try:
            raise TransportError(f"POST /x: {e}") from e
        except TransportError as t:
            return t


@pytest.mark.parametrize(("err", "retry"), [
    (ApiError(500, "InternalError", "etcd"), True),
    (ApiError(500, "", "a proxy's 500"), True),
    (ApiError(504, "Timeout", "slow"), True),
    (ApiError(429, "TooManyRequests", "throttled"), True),
    (ApiError(503, "ServiceUnavailable", "busy", details=StatusDetails(retry_after_seconds=1)), True),
    (ApiError(503, "ServiceUnavailable", "busy"), False),  # no Retry-After: DefaultShouldRetry does not retry
    (ApiError(500, "ServerTimeout", "m", details=StatusDetails()), True),
    (ApiError(403, "Forbidden", "no"), False),
    (ApiError(401, "Unauthorized", "who"), False),
    (ApiError(409, "Conflict", "c"), False),
    (_reset(), True),
    (TransportError("connection refused"), False),
])
def test_reviews_are_retried_as_webhook_default_should_retry_says(err: Exception, retry: bool) -> None:
    assert _should_retry(err) == retry


class FailingReviews:
    def __init__(self, errors: list[Exception]) -> None:
        self.errors = errors
        self.timeouts: list[object] = []

    def request_json(self, method: str, path: str, *, body: object = None, timeout: object = None) -> object:
        self.timeouts.append(timeout)
        if self.errors:
            raise self.errors.pop(0)
        return {"status": {"authenticated": True, "user": {"username": "u"}}}


def test_a_review_is_retried_within_its_backoff_then_fails_with_the_status_message() -> None:
    backoff = WebhookBackoff(duration=0.0, steps=3)
    api = FailingReviews([ApiError(500, "InternalError", "etcd down")])
    user = DelegatingAuthenticator(cast(Any, api), backoff=backoff).authenticate("Bearer t")
    assert user is not None and user.name == "u"
    assert api.timeouts == [10.0, 10.0]  # TokenRequestTimeout on every attempt
    api = FailingReviews([ApiError(403, "Forbidden", 'tokenreviews is forbidden: User "x" cannot create')])
    with pytest.raises(ReviewError) as e:
        DelegatingAuthenticator(cast(Any, api), backoff=backoff).authenticate("Bearer t")
    assert str(e.value) == 'TokenReview: tokenreviews is forbidden: User "x" cannot create'
    assert len(api.timeouts) == 1


def test_reviews_get_clients_of_their_own_with_the_delegating_limits(tmp_path: Path) -> None:
    api = _nowhere(ClientConnection(qps=5, burst=10))
    own = review_client(api)
    assert own.configuration is api.configuration and own._limiter is not api._limiter
    assert (own.connection.qps, own.connection.burst) == (200, 400)
    own.close()
    srv = SecureServer("127.0.0.1", 0, api, cert_dir=str(tmp_path))
    try:
        authn, authz = srv.authenticator, srv.authorizer
        assert authn.api is not api and authz.api is not api and authn.api is not authz.api
        assert authn.api.connection.qps == authz.api.connection.qps == 200
    finally:
        srv.shutdown()
        api.close()
