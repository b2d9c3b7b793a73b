"""The API server's errors, as k8s.io/apimachinery/pkg/api/errors has them: one `ApiError` (the HTTP
status code and the metav1.Status the server answered: reason, message, details) and `TransportError`
(the server could not be reached), with kube's predicates over them.

Every cluster raises these: `kube/api.py`'s KubeApi for a real API server, `embedded/memory.py` for the
embedded one; code that has to tell a conflict from a missing object asks `is_conflict(e)` /
`is_not_found(e)`, never a class name, a message text or a bare status code. The predicates follow
errors.go: the Status reason decides; the HTTP code is looked at only when the reason is not one kube
knows (`_KNOWN_REASONS`), except where errors.go itself does otherwise (is_already_exists,
is_server_timeout and is_resource_expired look at the reason only; is_too_many_requests at either).
As Go's errors.As, an error raised `from` an ApiError (its `__cause__`, followed down the chain) is
judged by that ApiError.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# metav1.StatusReason values (k8s.io/apimachinery/pkg/apis/meta/v1/types.go)
REASON_UNKNOWN = ""
REASON_UNAUTHORIZED = "Unauthorized"
REASON_FORBIDDEN = "Forbidden"
REASON_NOT_FOUND = "NotFound"
REASON_ALREADY_EXISTS = "AlreadyExists"
REASON_CONFLICT = "Conflict"
REASON_GONE = "Gone"
REASON_INVALID = "Invalid"
REASON_SERVER_TIMEOUT = "ServerTimeout"
REASON_STORE_READ_ERROR = "StorageReadError"
REASON_TIMEOUT = "Timeout"
REASON_TOO_MANY_REQUESTS = "TooManyRequests"
REASON_BAD_REQUEST = "BadRequest"
REASON_METHOD_NOT_ALLOWED = "MethodNotAllowed"
REASON_NOT_ACCEPTABLE = "NotAcceptable"
REASON_REQUEST_ENTITY_TOO_LARGE = "RequestEntityTooLarge"
REASON_UNSUPPORTED_MEDIA_TYPE = "UnsupportedMediaType"
REASON_INTERNAL_ERROR = "InternalError"
REASON_EXPIRED = "Expired"
REASON_SERVICE_UNAVAILABLE = "ServiceUnavailable"

# errors.go's knownReasons: a reason among these decides alone; any other lets the code decide.
_KNOWN_REASONS = frozenset({
    REASON_UNAUTHORIZED, REASON_FORBIDDEN, REASON_NOT_FOUND, REASON_ALREADY_EXISTS, REASON_CONFLICT, REASON_GONE,
    REASON_INVALID, REASON_SERVER_TIMEOUT, REASON_STORE_READ_ERROR, REASON_TIMEOUT, REASON_TOO_MANY_REQUESTS,
    REASON_BAD_REQUEST, REASON_METHOD_NOT_ALLOWED, REASON_NOT_ACCEPTABLE, REASON_REQUEST_ENTITY_TOO_LARGE,
    REASON_UNSUPPORTED_MEDIA_TYPE, REASON_INTERNAL_ERROR, REASON_EXPIRED, REASON_SERVICE_UNAVAILABLE,
})


@dataclass(frozen=True)
class StatusCause:
    """metav1.StatusCause: one reason (`type`) the request failed, and the field it is about."""

    type: str = ""
    message: str = ""
    field: str = ""


@dataclass(frozen=True)
class StatusDetails:
    """metav1.StatusDetails: the object the error is about (`kind` is its resource, as kube fills it)
    and the causes; retry_after_seconds is the server's hint to wait before retrying."""

    name: str = ""
    group: str = ""
    kind: str = ""
    uid: str = ""
    causes: tuple[StatusCause, ...] = field(default_factory=tuple)
    retry_after_seconds: int = 0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StatusDetails:
        """The JSON form of a Status's `details`."""
        causes = tuple(StatusCause(str(c.get("reason", "") or ""), str(c.get("message", "") or ""),
                                   str(c.get("field", "") or ""))
                       for c in d.get("causes") or () if isinstance(c, Mapping))
        return cls(name=str(d.get("name", "") or ""), group=str(d.get("group", "") or ""),
                   kind=str(d.get("kind", "") or ""), uid=str(d.get("uid", "") or ""), causes=causes,
                   retry_after_seconds=int(d.get("retryAfterSeconds", 0) or 0))


class ApiError(Exception):
    """The server refused a request (errors.StatusError): `status` is the HTTP code, `reason` the
    Status's reason ("" when it gave none), `message` its message, `details` its details (or None);
    `method` and `path` name the request when one was made."""

    def __init__(self, status: int, reason: str, message: str, method: str = "", path: str = "",
                 details: StatusDetails | None = None) -> None:
        super().__init__(message or f"{status} {reason}")
        self.status = status
        self.reason = reason
        self.message = message or f"{status} {reason}"
        self.method = method
        self.path = path
        self.details = details

    def __str__(self) -> str:
        return self.message


class TransportError(Exception):
    """The server could not be reached, or the connection broke."""


# ----- predicates (errors.go) ---------------------------------------------------------------------

def api_error_of(err: BaseException | None) -> ApiError | None:
    """The ApiError err is, or was raised from (errors.As over `__cause__`); None when there is none."""
    seen: set[int] = set()
    e = err
    while e is not None and id(e) not in seen:
        if isinstance(e, ApiError):
            return e
        seen.add(id(e))
        e = e.__cause__
    return None


def reason_for_error(err: BaseException | None) -> str:
    """ReasonForError: the Status reason, "" (StatusReasonUnknown) for anything that is not an ApiError."""
    e = api_error_of(err)
    return e.reason if e is not None else REASON_UNKNOWN


def _reason_and_code(err: BaseException | None) -> tuple[str, int]:
    e = api_error_of(err)
    return (e.reason, e.status) if e is not None else (REASON_UNKNOWN, 0)


def _is(err: BaseException | None, reason: str, code: int) -> bool:
    """The pattern of most of errors.go's IsX: the reason, or the code when the reason is not a known one."""
    r, c = _reason_and_code(err)
    return r == reason or (r not in _KNOWN_REASONS and c == code)


def is_not_found(err: BaseException | None) -> bool:
    return _is(err, REASON_NOT_FOUND, 404)


def is_already_exists(err: BaseException | None) -> bool:
    """The reason only: a 409 without reason AlreadyExists is a conflict, not this."""
    return reason_for_error(err) == REASON_ALREADY_EXISTS


def is_conflict(err: BaseException | None) -> bool:
    """An update refused because the object changed (a stale resourceVersion or a failed precondition):
    reason Conflict, or a 409 of a reason kube does not know. AlreadyExists (also 409) is not one."""
    return _is(err, REASON_CONFLICT, 409)


def is_invalid(err: BaseException | None) -> bool:
    return _is(err, REASON_INVALID, 422)


def is_gone(err: BaseException | None) -> bool:
    """Reason Gone, or a 410 of a reason kube does not know. A watch or list from a compacted
    resourceVersion is answered 410 with reason Expired: that is is_resource_expired, not this (client-go's
    reflector asks both)."""
    return _is(err, REASON_GONE, 410)


def is_resource_expired(err: BaseException | None) -> bool:
    return reason_for_error(err) == REASON_EXPIRED


def is_not_acceptable(err: BaseException | None) -> bool:
    return _is(err, REASON_NOT_ACCEPTABLE, 406)


def is_unsupported_media_type(err: BaseException | None) -> bool:
    return _is(err, REASON_UNSUPPORTED_MEDIA_TYPE, 415)


def is_method_not_supported(err: BaseException | None) -> bool:
    return _is(err, REASON_METHOD_NOT_ALLOWED, 405)


def is_service_unavailable(err: BaseException | None) -> bool:
    return _is(err, REASON_SERVICE_UNAVAILABLE, 503)


def is_bad_request(err: BaseException | None) -> bool:
    return _is(err, REASON_BAD_REQUEST, 400)


def is_unauthorized(err: BaseException | None) -> bool:
    return _is(err, REASON_UNAUTHORIZED, 401)


def is_forbidden(err: BaseException | None) -> bool:
    return _is(err, REASON_FORBIDDEN, 403)


def is_timeout(err: BaseException | None) -> bool:
    """The request took too long on the server (reason Timeout, or a 504 of an unknown reason)."""
    return _is(err, REASON_TIMEOUT, 504)


def is_server_timeout(err: BaseException | None) -> bool:
    """The reason only: no HTTP code stands for a retryable server timeout (errors.go)."""
    return reason_for_error(err) == REASON_SERVER_TIMEOUT


def is_internal_error(err: BaseException | None) -> bool:
    return _is(err, REASON_INTERNAL_ERROR, 500)


def is_too_many_requests(err: BaseException | None) -> bool:
    """Reason TooManyRequests, or a 429 whatever its reason (errors.go keeps this older code check)."""
    r, c = _reason_and_code(err)
    return r == REASON_TOO_MANY_REQUESTS or c == 429


def is_request_entity_too_large(err: BaseException | None) -> bool:
    """Reason RequestEntityTooLarge, or a 413 whatever its reason (as is_too_many_requests)."""
    r, c = _reason_and_code(err)
    return r == REASON_REQUEST_ENTITY_TOO_LARGE or c == 413


def suggests_client_delay(err: BaseException | None) -> int | None:
    """SuggestsClientDelay: the seconds the server asked the client to wait (reason ServerTimeout, or a
    retryAfterSeconds in the details); None when it asked for no wait."""
    e = api_error_of(err)
    if e is None or e.details is None:
        return None
    if e.reason == REASON_SERVER_TIMEOUT:
        return e.details.retry_after_seconds
    if e.details.retry_after_seconds > 0:
        return e.details.retry_after_seconds
    return None


# ----- the error of a reply that is not a Status ------------------------------------------------------

_GENERIC: dict[int, tuple[str, str]] = {
    400: (REASON_BAD_REQUEST, "the server rejected our request for an unknown reason"),
    401: (REASON_UNAUTHORIZED, "the server has asked for the client to provide credentials"),
    404: (REASON_NOT_FOUND, "the server could not find the requested resource"),
    405: (REASON_METHOD_NOT_ALLOWED, "the server does not allow this method on the requested resource"),
    422: (REASON_INVALID, "the server rejected our request due to an error in our request"),
    429: (REASON_TOO_MANY_REQUESTS, "the server has received too many requests and has asked us to try again later"),
    503: (REASON_SERVICE_UNAVAILABLE, "the server is currently unable to handle the request"),
    504: (REASON_TIMEOUT, "the server was unable to return a response in the time allotted, but may still be "
                         "processing the request"),
}


def generic_server_response(status: int, method: str, server_message: str = "", path: str = "") -> ApiError:
    """NewGenericServerResponse: the error client-go makes of an error status whose body is no Status
    (a proxy's page, an empty reply): the reason follows from the code (a 409 to a POST is AlreadyExists,
    to anything else Conflict), the message is kube's for that code."""
    reason = REASON_UNKNOWN
    message = f"the server responded with the status code {status} but did not return more information"
    if status == 409:
        reason = REASON_ALREADY_EXISTS if method.upper() == "POST" else REASON_CONFLICT
        message = "the server reported a conflict"
    elif status in _GENERIC:
        reason, message = _GENERIC[status]
    elif status == 403:
        reason, message = REASON_FORBIDDEN, server_message
    elif status == 406:
        reason = REASON_NOT_ACCEPTABLE
        message = server_message if server_message and server_message != "unknown" else (
            "the server was unable to respond with a content type that the client supports")
    elif status == 415:
        reason, message = REASON_UNSUPPORTED_MEDIA_TYPE, server_message
    elif status >= 500:
        reason = REASON_INTERNAL_ERROR
        message = f'an error on the server ("{server_message}") has prevented the request from succeeding'
    return ApiError(status, reason, message, method, path)


__all__ = [
    "ApiError",
    "StatusCause",
    "StatusDetails",
    "TransportError",
    "api_error_of",
    "generic_server_response",
    "is_already_exists",
    "is_bad_request",
    "is_conflict",
    "is_forbidden",
    "is_gone",
    "is_internal_error",
    "is_invalid",
    "is_method_not_supported",
    "is_not_acceptable",
    "is_not_found",
    "is_request_entity_too_large",
    "is_resource_expired",
    "is_server_timeout",
    "is_service_unavailable",
    "is_timeout",
    "is_too_many_requests",
    "is_unauthorized",
    "is_unsupported_media_type",
    "reason_for_error",
    "suggests_client_delay",
]
