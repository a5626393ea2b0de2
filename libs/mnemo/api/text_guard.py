"""Path and query parameters must be text the store can hold, or they get a located 400.

Starlette decodes percent-escapes leniently (invalid UTF-8 becomes U+FFFD), so two
different raw user ids could turn into one; the raw bytes are checked here instead. JSON
bodies are checked by `mnemo.api.json_guard`.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from fastapi import Request

from mnemo.domain.requests import FieldError, InvalidRequest
from mnemo.domain.text import text_problem

INVALID_UTF8 = "not valid UTF-8 once percent-decoded"


def _strict(raw: bytes) -> str | None:
    try:
        return unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _query_errors(query_string: bytes) -> list[FieldError]:
    errors = []
    for pair in query_string.replace(b"+", b" ").split(b"&"):
        raw_key, _, raw_value = pair.partition(b"=")
        key = unquote_to_bytes(raw_key).decode("utf-8", "replace")
        value = _strict(raw_value)
        problem = text_problem(value) if value is not None else INVALID_UTF8
        key_problem = text_problem(key) if _strict(raw_key) is not None else INVALID_UTF8
        for found in (key_problem, problem):
            if found is not None:
                errors.append(FieldError(location=f"query.{key}", message=found))
                break
    return errors


def _path_errors(request: Request) -> list[FieldError]:
    raw_path: bytes = request.scope.get("raw_path") or request.scope["path"].encode()
    errors = []
    for segment in raw_path.split(b"/"):
        decoded = _strict(segment)
        problem = text_problem(decoded) if decoded is not None else INVALID_UTF8
        if problem is None:
            continue
        lenient = unquote_to_bytes(segment).decode("utf-8", "replace")
        names = [k for k, v in request.path_params.items() if v == lenient]
        errors.append(FieldError(location=f"path.{names[0]}" if names else "path", message=problem))
    return errors


async def reject_bad_parameters(request: Request) -> None:
    """Router dependency: refuse NUL, unpaired surrogates and invalid UTF-8 in the path and
    the query string."""
    errors = _path_errors(request) + _query_errors(request.scope.get("query_string", b""))
    if errors:
        raise InvalidRequest("the request's parameters hold text that cannot be stored", errors)
