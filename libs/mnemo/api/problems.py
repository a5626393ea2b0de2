"""RFC 7807 problem documents: every error the gateway returns has this shape.

`{type, title, status, detail, errors: [{location, message, value}]}` served as
`application/problem+json`. Locations name the offending field, e.g.
`body.input.conversation.messages` or `body.input.pre_extracted.items[0].topic`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from mnemo.domain.requests import FieldError, InvalidRequest, NotFound

log = logging.getLogger(__name__)

PROBLEM_MEDIA_TYPE = "application/problem+json"
_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class ProblemError(BaseModel):
    location: str
    message: str
    value: Any | None = None


class Problem(BaseModel):
    """The body of every error response."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    errors: list[ProblemError] = Field(default_factory=list)


class Unauthorized(Exception):
    """Missing, malformed, unknown or revoked API key."""


def problem_document(
    status: int, detail: str, errors: Sequence[FieldError | ProblemError] = ()
) -> Problem:
    """The problem document for `status` (also what MCP tool errors carry)."""
    return Problem(
        title=_TITLES.get(status, "Error"),
        status=status,
        detail=detail,
        errors=[
            ProblemError(location=e.location, message=e.message, value=e.value) for e in errors
        ],
    )


def problem_response(
    status: int,
    detail: str,
    errors: Sequence[FieldError | ProblemError] = (),
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    problem = problem_document(status, detail, errors)
    return JSONResponse(
        problem.model_dump(mode="json"),
        status_code=status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=dict(headers) if headers else None,
    )


def location_of(loc: Sequence[str | int]) -> str:
    """('body', 'items', 0, 'topic') -> 'body.items[0].topic'."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _echo(value: object) -> object | None:
    """Echo scalar inputs back in errors; never whole documents."""
    if isinstance(value, str):
        return value[:200]
    if isinstance(value, bool | int | float):
        return value
    return None


def validation_errors(raw: Sequence[Any]) -> tuple[int, str, list[ProblemError]]:
    errors = [
        ProblemError(
            location=location_of(e.get("loc", ())),
            message=str(e.get("msg", "invalid")),
            value=_echo(e.get("input")),
        )
        for e in raw
    ]
    if any(e.get("type") == "json_invalid" for e in raw):
        return 400, "the request body is not valid JSON", errors
    return 422, "the request does not match the schema", errors


async def _invalid_request(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, InvalidRequest)
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
    return problem_response(exc.status, exc.detail, exc.errors, headers=headers)


async def _not_found(_: Request, exc: Exception) -> JSONResponse:
    return problem_response(404, str(exc) or "not found")


async def _unauthorized(_: Request, exc: Exception) -> JSONResponse:
    return problem_response(
        401, str(exc) or "a valid API key is required", headers={"WWW-Authenticate": "Bearer"}
    )


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


def install_problem_handlers(app: FastAPI) -> None:
    app.add_exception_handler(InvalidRequest, _invalid_request)
    app.add_exception_handler(NotFound, _not_found)
    app.add_exception_handler(Unauthorized, _unauthorized)
    app.add_exception_handler(RequestValidationError, _request_validation)
    app.add_exception_handler(StarletteHTTPException, _http_exception)
    app.add_exception_handler(Exception, _unexpected)
