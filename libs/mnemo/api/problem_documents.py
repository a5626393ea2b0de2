"""RFC 7807 problem documents, as plain pydantic: every refusal of the gateway and of the MCP
tools has this shape (`mnemo.api.problems` serves them over HTTP; this module needs no
FastAPI, so the stdio MCP server can use it).

`{type, title, status, detail, errors: [{location, message, value}]}`. Locations name the
offending field, e.g. `body.input.conversation.messages` or
`body.input.pre_extracted.items[0].topic`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from mnemo.domain.requests import FieldError

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
    429: "Too Many Requests",
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
