"""RFC 7807 problems over HTTP: every error the gateway returns is one, served as
`application/problem+json` (the documents themselves: `mnemo.api.problem_documents`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException

from mnemo.api.problem_documents import (
    ProblemError,
    problem_document,
    validation_errors,
)
from mnemo.api.statuses import STATUS_OF
from mnemo.batching import QueueFull
from mnemo.core.failures import describe, is_transient
from mnemo.core.transport import RETRY_AFTER_SECONDS
from mnemo.domain.grants import Forbidden
from mnemo.domain.requests import FieldError, InvalidRequest, NotFound

log = logging.getLogger(__name__)

PROBLEM_MEDIA_TYPE = "application/problem+json"


class Unauthorized(Exception):
    """Missing, malformed, unknown or revoked API key."""


def problem_response(
    status: int,
    detail: str,
    errors: Sequence[FieldError | ProblemError] = (),
    headers: Mapping[str, str] | None = None,
    extensions: Mapping[str, Any] | None = None,
) -> JSONResponse:
    problem = problem_document(status, detail, errors)
    return JSONResponse(
        {**(extensions or {}), **problem.model_dump(mode="json")},
        status_code=status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=dict(headers) if headers else None,
    )


async def _invalid_request(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, InvalidRequest)
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
    return problem_response(STATUS_OF[exc.kind], exc.detail, exc.errors, headers=headers)


async def _not_found(_: Request, exc: Exception) -> JSONResponse:
    return problem_response(404, str(exc) or "not found")


async def _unauthorized(_: Request, exc: Exception) -> JSONResponse:
    return problem_response(
        401, str(exc) or "a valid API key is required", headers={"WWW-Authenticate": "Bearer"}
    )


async def _forbidden(_: Request, exc: Exception) -> JSONResponse:
    return problem_response(403, str(exc) or "this credential may not do this")


async def _request_validation(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    status, detail, errors = validation_errors(exc.errors())
    return problem_response(status, detail, errors)


async def _http_exception(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    return problem_response(exc.status_code, str(exc.detail), headers=exc.headers)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem_response(500, "internal error; the server log has details")


# Registered by class, not left to the catch-all: Starlette re-raises what reaches the
# catch-all for the server to log again, a traceback per request during an outage.
_INFRASTRUCTURE_ERRORS: tuple[type[Exception], ...] = (
    sa_exc.DBAPIError,
    sa_exc.TimeoutError,
    psycopg.Error,
    OSError,
    QueueFull,
)


async def _unavailable(request: Request, exc: Exception) -> JSONResponse:
    """503 with Retry-After while the database (or broker) is unreachable or a queue is
    full; anything else of these classes is an internal error."""
    if not (isinstance(exc, QueueFull) or is_transient(exc)):
        return await _unexpected(request, exc)
    log.warning("%s %s: unavailable (%s)", request.method, request.url.path, describe(exc, 300))
    return problem_response(
        503,
        "the service is temporarily unavailable (its database is unreachable or its queue "
        "is full); the request was not carried out, retry later",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def install_problem_handlers(app: FastAPI) -> None:
    app.add_exception_handler(InvalidRequest, _invalid_request)
    app.add_exception_handler(NotFound, _not_found)
    app.add_exception_handler(Unauthorized, _unauthorized)
    app.add_exception_handler(Forbidden, _forbidden)
    app.add_exception_handler(RequestValidationError, _request_validation)
    app.add_exception_handler(StarletteHTTPException, _http_exception)
    for error in _INFRASTRUCTURE_ERRORS:
        app.add_exception_handler(error, _unavailable)
    app.add_exception_handler(Exception, _unexpected)
