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

from mnemo.domain.requests import FieldError, location_of

__all__ = ["Problem", "ProblemError", "location_of", "problem_document", "validation_errors"]

# Bounds of what an error echoes back: a problem document stays small whatever was sent.
MAX_ECHO_CHARS = 200
MAX_DETAIL_CHARS = 2_000
MAX_ERRORS = 50
_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    412: "Precondition Failed",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    421: "Misdirected Request",
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
    """The problem document for `status` (also what MCP tool errors carry). Every text in
    it is bounded and encodable, so rendering it cannot fail whatever the request held."""
    return Problem(
        title=_TITLES.get(status, "Error"),
        status=status,
        detail=safe_text(detail, MAX_DETAIL_CHARS),
        errors=[
            ProblemError(
                location=safe_text(e.location, MAX_DETAIL_CHARS),
                message=safe_text(e.message, MAX_DETAIL_CHARS),
                value=_echo(e.value),
            )
            for e in errors[:MAX_ERRORS]
        ],
    )


def safe_text(text: str, limit: int) -> str:
    """`text` as it may be echoed: at most `limit` characters, and anything UTF-8 cannot
    encode (an unpaired surrogate) escaped as `\\udXXX`."""
    text = text[:limit] + ("..." if len(text) > limit else "")
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _echo(value: object) -> object | None:
    """Echo scalar inputs back in errors; never whole documents."""
    if isinstance(value, str):
        return safe_text(value, MAX_ECHO_CHARS)
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
