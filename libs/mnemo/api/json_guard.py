"""Check JSON request bodies before any route parses them: depth, encoding, storable text.

A body nested deeper than `JSON_DEPTH`, or one that is not UTF-8, is refused with a 400
problem document naming the location; nothing behind this middleware walks such a
document. REST bodies (`/v1/...`) holding text the store cannot hold (NUL, unpaired
surrogates) are refused the same way; `/mcp` answers such tool arguments as tool errors
itself. Bodies that are not JSON at all pass through, so FastAPI reports them as it
always has.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemo.api.problems import problem_response
from mnemo.domain.limits import JSON_DEPTH
from mnemo.domain.requests import FieldError, location_of
from mnemo.domain.text import TooDeep, bad_text

_METHODS = frozenset({"POST", "PUT", "PATCH"})


def _is_json(scope: Scope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            media = value.split(b";", 1)[0].strip().lower()
            return media == b"application/json" or media.endswith(b"+json")
    return False


def body_problem(body: bytes, check_text: bool = True) -> tuple[str, list[FieldError]] | None:
    """(detail, errors) when `body` must be refused; None to let it through."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"body (byte {exc.start})"
        return "the request body is not valid UTF-8", [
            FieldError(location="body", message=f"invalid UTF-8 at {where}")
        ]
    try:
        document: Any = json.loads(text)
    except RecursionError:
        return _too_deep(TooDeep((), JSON_DEPTH))
    except ValueError:
        return None  # not JSON: FastAPI answers with its own 400 and the error position
    try:
        found = [
            FieldError(location=location_of(("body", *where)), message=message)
            for where, message in bad_text(document, max_depth=JSON_DEPTH)
            if check_text
        ]
    except TooDeep as exc:
        return _too_deep(exc)
    if found:
        return "the request holds text that cannot be stored", found
    return None


def _too_deep(exc: TooDeep) -> tuple[str, list[FieldError]]:
    detail = f"the request body is nested deeper than {exc.max_depth} levels"
    return detail, [FieldError(location=location_of(("body", *exc.location)), message=detail)]


class JsonGuard:
    """Pure ASGI middleware; sits inside `BodySizeLimit`, so the body it reads is capped.
    Text is checked in bodies under `text_prefix` (the REST API)."""

    def __init__(self, app: ASGIApp, text_prefix: str = "/v1/") -> None:
        self.app = app
        self.text_prefix = text_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _METHODS or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        refused = body_problem(body, check_text=scope["path"].startswith(self.text_prefix))
        if refused is not None:
            await problem_response(400, refused[0], refused[1])(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # e.g. http.disconnect
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)
