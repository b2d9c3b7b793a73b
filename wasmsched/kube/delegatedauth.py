"""Delegated authentication and authorization of the secure port, as kube-scheduler's
DelegatingAuthenticationOptions/DelegatingAuthorizationOptions set them up.

Authentication: a bearer token is sent to the API server as an authentication.k8s.io/v1
TokenReview; answers (authenticated or not) are cached 10 s, errors are not. A request without a
token is `system:anonymous`; a token the API server rejects is an error (401), never anonymous.
Authorization: members of `system:masters` and the always-allowed paths (/healthz, /readyz, /livez;
exact, or a prefix ending in `*`) pass; everything else is an authorization.k8s.io/v1
SubjectAccessReview of the non-resource path and verb, cached 10 s whether allowed or denied.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from wasmsched.api.errors import (
    ApiError,
    TransportError,
    is_internal_error,
    is_timeout,
    is_too_many_requests,
    suggests_client_delay,
)
from wasmsched.kube.api import ClientConnection, KubeApi
from wasmsched.kube.codec import CodecError

ANONYMOUS_USER = "system:anonymous"
UNAUTHENTICATED_GROUP = "system:unauthenticated"
AUTHENTICATED_GROUP = "system:authenticated"
DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
DEFAULT_ALWAYS_ALLOW_GROUPS = ("system:masters",)
CACHE_TTL_SECONDS = 10.0  # --authentication-token-webhook-cache-ttl, --authorization-webhook-cache-*-ttl
REVIEW_TIMEOUT_SECONDS = 10.0  # TokenRequestTimeout, ClientTimeout
# DelegatingAuthenticationOptions/DelegatingAuthorizationOptions give each review client its own limits.
REVIEW_CLIENT_QPS = 200.0
REVIEW_CLIENT_BURST = 400
_CACHE_MAX_ENTRIES = 4096


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict, hash=False, compare=False)


ANONYMOUS = UserInfo(ANONYMOUS_USER, groups=(UNAUTHENTICATED_GROUP,))


@dataclass(frozen=True)
class _TokenVerdict:
    """A TokenReview's answer: the user, or None when the token was not authenticated."""

    user: UserInfo | None


class ReviewError(Exception):
    """The API server could not answer a TokenReview or SubjectAccessReview."""


class InvalidTokenError(Exception):
    """The bearer token was presented and is not valid (401)."""


@dataclass(frozen=True)
class WebhookBackoff:
    """DefaultAuthWebhookRetryBackoff: 500ms, factor 1.5, jitter 0.2, 5 steps."""

    duration: float = 0.5
    factor: float = 1.5
    jitter: float = 0.2
    steps: int = 5


_V = TypeVar("_V")


class TTLCache(Generic[_V]):
    """A bounded map whose entries expire; oldest entries go first when full."""

    def __init__(self, max_entries: int = _CACHE_MAX_ENTRIES, clock: Callable[[], float] = time.monotonic) -> None:
        self._items: OrderedDict[str, tuple[float, _V]] = OrderedDict()
        self._max = max_entries
        self._clock = clock
        self._mu = threading.Lock()

    def get(self, key: str) -> _V | None:
        with self._mu:
            item = self._items.get(key)
            if item is None:
                return None
            if item[0] <= self._clock():
                del self._items[key]
                return None
            return item[1]

    def put(self, key: str, value: _V, ttl: float) -> None:
        with self._mu:
            self._items[key] = (self._clock() + ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self._max:
                self._items.popitem(last=False)


def review_client(api: KubeApi) -> KubeApi:
    """A client for one kind of review: the same server and credentials as `api`, and its own rate limiter
    with the delegating options' QPS and burst, so reviews never wait on the scheduler's requests."""
    return KubeApi(api.configuration, ClientConnection(qps=REVIEW_CLIENT_QPS, burst=REVIEW_CLIENT_BURST))


def _connection_reset(e: BaseException) -> bool:
    """utilnet.IsConnectionReset: a ConnectionResetError anywhere in the failure's causes (urllib3 wraps
    it in its own errors, as an argument or a cause)."""
    seen: set[int] = set()
    todo: list[BaseException] = [e]
    while todo:
        cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, ConnectionResetError):
            return True
        todo.extend(x for x in (cur.__cause__, cur.__context__, *cur.args) if isinstance(x, BaseException))
        reason = getattr(cur, "reason", None)  # urllib3's MaxRetryError
        if isinstance(reason, BaseException):
            todo.append(reason)
    return False


def _should_retry(e: BaseException) -> bool:
    """webhook.DefaultShouldRetry: connection resets, internal errors, timeouts, throttling, and any
    answer that asks the client to wait (Retry-After)."""
    if isinstance(e, TransportError):
        return _connection_reset(e)
    return (is_internal_error(e) or is_timeout(e) or is_too_many_requests(e)
            or suggests_client_delay(e) is not None)


def _post_review(api: KubeApi, path: str, body: dict[str, Any], backoff: WebhookBackoff,
                 what: str) -> dict[str, Any]:  # fmt: skip
    delay = backoff.duration
    for step in range(backoff.steps):
        try:
            reply = api.request_json("POST", path, body=body, timeout=REVIEW_TIMEOUT_SECONDS)
            if not isinstance(reply, dict):
                raise CodecError(f"the reply to POST {path} is not a JSON object")
            return reply
        except (ApiError, TransportError, CodecError) as e:
            if step == backoff.steps - 1 or not _should_retry(e):
                raise ReviewError(f"{what}: {_message(e)}") from None
        time.sleep(delay * (1 + random.random() * backoff.jitter))
        delay *= backoff.factor
    raise ReviewError(f"{what}: no attempt made")  # steps <= 0


def _message(e: BaseException) -> str:
    """One line for logs: an ApiError's Status message, else the exception's text."""
    text = str(e) or type(e).__name__
    return text.splitlines()[0]


class DelegatingAuthenticator:
    """Bearer tokens → TokenReview (cached); no token → anonymous (when enabled)."""

    def __init__(self, api: KubeApi, anonymous: bool = True, cache_ttl: float = CACHE_TTL_SECONDS,
                 backoff: WebhookBackoff | None = None) -> None:  # fmt: skip
        self.api = api
        self.anonymous = anonymous
        self.cache_ttl = cache_ttl
        self.backoff = backoff or WebhookBackoff()
        self._cache: TTLCache[_TokenVerdict] = TTLCache()

    def authenticate(self, authorization_header: str | None) -> UserInfo | None:
        """The request's user; None when no credentials were presented and anonymous is disabled.
        Raises InvalidTokenError for a rejected token, ReviewError when the API server fails."""
        token = bearer_token(authorization_header)
        if token is None:
            return ANONYMOUS if self.anonymous else None
        key = hashlib.sha256(token.encode()).hexdigest()  # never keep the token itself
        verdict = self._cache.get(key)
        if verdict is None:
            verdict = _TokenVerdict(self._review(token))
            self._cache.put(key, verdict, self.cache_ttl)
        if verdict.user is None:
            raise InvalidTokenError("invalid bearer token")
        return verdict.user

    def _review(self, token: str) -> UserInfo | None:
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        reply = _post_review(self.api, "/apis/authentication.k8s.io/v1/tokenreviews", body, self.backoff,
                             "TokenReview")  # fmt: skip
        status = reply.get("status") or {}
        if not status.get("authenticated"):
            return None
        user = status.get("user") or {}
        groups = list(user.get("groups") or [])
        # group.AuthenticatedGroupAdder: every authenticated user is in system:authenticated
        if AUTHENTICATED_GROUP not in groups and user.get("username") != ANONYMOUS_USER:
            groups.append(AUTHENTICATED_GROUP)
        return UserInfo(
            name=user.get("username") or "", uid=user.get("uid") or "", groups=tuple(groups),
            extra={k: list(v) for k, v in (user.get("extra") or {}).items()},
        )


def bearer_token(header: str | None) -> str | None:
    """bearertoken.AuthenticateRequest: `Bearer <token>`, scheme case-insensitive; anything else is no
    token."""
    if not header:
        return None
    parts = header.strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    return parts[1] or None


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


class DelegatingAuthorizer:
    """The union kube-scheduler builds: privileged groups, always-allowed paths, then a
    SubjectAccessReview webhook (cached)."""

    def __init__(
        self, api: KubeApi, always_allow_paths: Sequence[str] = DEFAULT_ALWAYS_ALLOW_PATHS,
        always_allow_groups: Sequence[str] = DEFAULT_ALWAYS_ALLOW_GROUPS, allow_cache_ttl: float = CACHE_TTL_SECONDS,
        deny_cache_ttl: float = CACHE_TTL_SECONDS, backoff: WebhookBackoff | None = None,
    ) -> None:  # fmt: skip
        self.api = api
        self.always_allow_groups = frozenset(always_allow_groups)
        self._exact_paths = frozenset(p for p in always_allow_paths if not p.endswith("*"))
        self._prefix_paths = tuple(p[:-1] for p in always_allow_paths if p.endswith("*"))
        self.allow_cache_ttl = allow_cache_ttl
        self.deny_cache_ttl = deny_cache_ttl
        self.backoff = backoff or WebhookBackoff()
        self._cache: TTLCache[Decision] = TTLCache()

    def path_always_allowed(self, path: str) -> bool:
        return path in self._exact_paths or any(path.startswith(p) for p in self._prefix_paths)

    def authorize(self, user: UserInfo, verb: str, path: str) -> Decision:
        """Raises ReviewError when the API server cannot be asked."""
        if self.always_allow_groups.intersection(user.groups):
            return Decision(True)
        if self.path_always_allowed(path):
            return Decision(True)
        spec: dict[str, Any] = {
            "user": user.name,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = user.extra
        key = json.dumps(spec, sort_keys=True)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        reply = _post_review(self.api, "/apis/authorization.k8s.io/v1/subjectaccessreviews", body,
                             self.backoff, "SubjectAccessReview")  # fmt: skip
        status = reply.get("status") or {}
        decision = Decision(bool(status.get("allowed")), str(status.get("reason") or ""))
        self._cache.put(key, decision, self.allow_cache_ttl if decision.allowed else self.deny_cache_ttl)
        return decision
