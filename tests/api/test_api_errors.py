"""api/errors.py: kube's predicates (k8s.io/apimachinery/pkg/api/errors) over ApiError, reason first and
the code only for a reason kube does not know, and the errors client-go makes of a reply without a Status."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from wasmsched.api import errors
from wasmsched.api.errors import (
    ApiError,
    StatusCause,
    StatusDetails,
    TransportError,
    api_error_of,
    generic_server_response,
    reason_for_error,
    suggests_client_delay,
)

Predicate = Callable[[BaseException | None], bool]

# predicate, its reason, its code (None: errors.go never looks at the code for it)
PREDICATES: list[tuple[str, str, int | None]] = [
    ("is_not_found", "NotFound", 404),
    ("is_already_exists", "AlreadyExists", None),
    ("is_conflict", "Conflict", 409),
    ("is_invalid", "Invalid", 422),
    ("is_gone", "Gone", 410),
    ("is_resource_expired", "Expired", None),
    ("is_not_acceptable", "NotAcceptable", 406),
    ("is_unsupported_media_type", "UnsupportedMediaType", 415),
    ("is_method_not_supported", "MethodNotAllowed", 405),
    ("is_service_unavailable", "ServiceUnavailable", 503),
    ("is_bad_request", "BadRequest", 400),
    ("is_unauthorized", "Unauthorized", 401),
    ("is_forbidden", "Forbidden", 403),
    ("is_timeout", "Timeout", 504),
    ("is_server_timeout", "ServerTimeout", None),
    ("is_internal_error", "InternalError", 500),
    ("is_too_many_requests", "TooManyRequests", 429),
    ("is_request_entity_too_large", "RequestEntityTooLarge", 413),
]
# errors.go's two older predicates match their code whatever the reason.
CODE_WHATEVER_THE_REASON = {"is_too_many_requests", "is_request_entity_too_large"}


def _pred(name: str) -> Predicate:
    fn: Predicate = getattr(errors, name)
    return fn


@pytest.mark.parametrize(("name", "reason", "code"), PREDICATES, ids=[p[0] for p in PREDICATES])
def test_each_predicate_is_true_for_its_reason_whatever_the_code(name: str, reason: str, code: int | None) -> None:
    pred = _pred(name)
    assert pred(ApiError(code or 500, reason, "m"))
    assert pred(ApiError(418, reason, "m"))  # the reason decides
    # and no other predicate claims that reason (unless by the code, as errors.go's older two do)
    for other, _, _ in PREDICATES:
        if other != name and other not in CODE_WHATEVER_THE_REASON:
            assert not _pred(other)(ApiError(418, reason, "m")), other


@pytest.mark.parametrize(("name", "reason", "code"), PREDICATES, ids=[p[0] for p in PREDICATES])
def test_the_code_counts_only_when_the_reason_is_not_one_kube_knows(name: str, reason: str, code: int | None) -> None:
    pred = _pred(name)
    for code_of_kind in ([code] if code else []) + [404, 409, 410, 422, 429, 500]:
        unknown_reason = pred(ApiError(code_of_kind, "", "m")) or pred(ApiError(code_of_kind, "SomethingNew", "m"))
        assert unknown_reason == (code_of_kind == code), code_of_kind
    if code is None:
        return
    # a reason kube knows decides even against the code
    other_reason = "Invalid" if reason != "Invalid" else "Conflict"
    assert pred(ApiError(code, other_reason, "m")) == (name in CODE_WHATEVER_THE_REASON)


def test_a_409_already_exists_is_not_a_conflict_and_a_409_conflict_does_not_already_exist() -> None:
    exists = ApiError(409, "AlreadyExists", 'pods "p" already exists')
    conflict = ApiError(409, "Conflict", 'Operation cannot be fulfilled on pods "p": the object has been modified')
    assert errors.is_already_exists(exists) and not errors.is_conflict(exists)
    assert errors.is_conflict(conflict) and not errors.is_already_exists(conflict)
    # a 409 with no reason is a conflict (the code counts), never AlreadyExists (only its reason does)
    assert errors.is_conflict(ApiError(409, "", "")) and not errors.is_already_exists(ApiError(409, "", ""))


def test_a_410_expired_is_resource_expired_not_gone() -> None:
    expired = ApiError(410, "Expired", "too old resource version: 1 (42)")
    assert errors.is_resource_expired(expired) and not errors.is_gone(expired)
    gone = ApiError(410, "Gone", "gone")
    assert errors.is_gone(gone) and not errors.is_resource_expired(gone)
    assert errors.is_gone(ApiError(410, "", ""))


def test_predicates_are_false_for_anything_else() -> None:
    for name, _, _ in PREDICATES:
        pred = _pred(name)
        assert not pred(None)
        assert not pred(TransportError("connection refused"))
        assert not pred(RuntimeError("the object has been modified"))  # a message is not a reason
    assert reason_for_error(ValueError()) == ""
    assert suggests_client_delay(RuntimeError()) is None


def test_an_error_raised_from_an_api_error_is_judged_by_it() -> None:
    """errors.As: kube's predicates see through wrapping; here that is `raise ... from e`."""
    cause = ApiError(404, "NotFound", 'pods "p" not found')
    try:
        try:
            raise cause
        except ApiError as e:
            raise LookupError("binding pod default/p") from e
    except LookupError as wrapped:
        assert api_error_of(wrapped) is cause
        assert errors.is_not_found(wrapped)
        assert reason_for_error(wrapped) == "NotFound"
    # an exception raised while handling one (its __context__, no `from`) does not wrap it
    try:
        try:
            raise cause
        except ApiError:
            raise LookupError("unrelated") from None
    except LookupError as other:
        assert not errors.is_not_found(other)


def test_suggests_client_delay_reads_the_details() -> None:
    assert suggests_client_delay(ApiError(500, "ServerTimeout", "m", details=StatusDetails(retry_after_seconds=0))) == 0
    assert suggests_client_delay(ApiError(503, "ServiceUnavailable", "m",
                                          details=StatusDetails(retry_after_seconds=3))) == 3
    assert suggests_client_delay(ApiError(503, "ServiceUnavailable", "m", details=StatusDetails())) is None
    assert suggests_client_delay(ApiError(500, "ServerTimeout", "m")) is None  # no details: no hint


def test_details_from_the_status_json() -> None:
    d = StatusDetails.from_dict({"name": "p", "kind": "pods", "causes": [
        {"reason": "FieldValueInvalid", "message": "Invalid value", "field": "spec.priority"}], "retryAfterSeconds": 2})
    assert d == StatusDetails(name="p", kind="pods", retry_after_seconds=2,
                              causes=(StatusCause("FieldValueInvalid", "Invalid value", "spec.priority"),))


@pytest.mark.parametrize(("status", "method", "reason", "message"), [
    (409, "POST", "AlreadyExists", "the server reported a conflict"),
    (409, "PUT", "Conflict", "the server reported a conflict"),
    (404, "GET", "NotFound", "the server could not find the requested resource"),
    (403, "GET", "Forbidden", "proxy says no"),
    (422, "POST", "Invalid", "the server rejected our request due to an error in our request"),
    (502, "GET", "InternalError", 'an error on the server ("proxy says no") has prevented the request from succeeding'),
    (418, "GET", "", "the server responded with the status code 418 but did not return more information"),
])
def test_a_reply_without_a_status_gets_client_gos_generic_error(status: int, method: str, reason: str,
                                                                 message: str) -> None:
    e = generic_server_response(status, method, "proxy says no", "/api/v1/x")
    assert (e.status, e.reason, e.message, e.method, e.path) == (status, reason, message, method, "/api/v1/x")
