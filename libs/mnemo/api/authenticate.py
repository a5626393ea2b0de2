"""Check the API key from the request head, before anything reads the request body.

A keyless or bad-key request to the API (`/v1/...`, `/mcp`) costs a header parse and a
cached key lookup: it is refused with the 401 problem before its body is read, and when
it has a body the answer closes the connection, so a client that keeps sending gains
nothing. The middleware sits outside the in-flight cap, so such requests never take
capacity from authenticated ones. Accepted requests carry their grant (project, read-only,
bound user) and the secret's digest (for per-key pools) in the ASGI scope, where
`get_grant` finds them. A read-only credential's writes are refused here with a 403,
before their body is read (MCP tool calls are checked per tool: `mnemo.mcp`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.api.problems import Unauthorized, problem_response
from mnemo.core.failures import describe, is_transient
from mnemo.core.transport import RETRY_AFTER_SECONDS
from mnemo.domain.grants import Grant, is_read_request
from mnemo.store.keys import hash_key

if TYPE_CHECKING:
    from mnemo.api.oauth.resource import Credentials
    from mnemo.settings import Settings

log = logging.getLogger(__name__)

SCOPE_PROJECT = "mnemo.project"  # the project of the request's key
SCOPE_KEY = "mnemo.key"  # the key's digest ("" with auth disabled): per-key pools count by it
SCOPE_GRANT = "mnemo.grant"  # what the request's credential may do (a `Grant`)


def is_protected(path: str) -> bool:
    """The paths that need a key: the REST API and MCP. Health, metrics, the OpenAPI
    document and the console (its own login) do not."""
    return path.startswith("/v1/") or path == "/mcp" or path.startswith("/mcp/")


def bearer_secret(scope: Scope) -> str | None:
    """The credentials of an `Authorization: Bearer <key>` header (scheme case-insensitive,
    as FastAPI's HTTPBearer reads it); None without one."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, credentials = value.decode("latin-1").strip().partition(" ")
            if scheme.lower() != "bearer" or not credentials.strip():
                return None
            return credentials.strip()
    return None


def _has_body(scope: Scope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return True
    return False


class Authenticate:
    """Pure ASGI middleware; `engine` is read per request (the app's lifespan sets it)."""

    def __init__(
        self, app: ASGIApp, settings: Settings, credentials: Callable[[], Credentials]
    ) -> None:
        self.app = app
        self.settings = settings
        self.credentials = credentials

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_protected(scope["path"]):
            await self.app(scope, receive, send)
            return
        if self.settings.auth_disabled:
            scope[SCOPE_PROJECT], scope[SCOPE_KEY] = self.settings.project, ""
            scope[SCOPE_GRANT] = Grant(self.settings.project)
            await self.app(scope, receive, send)
            return
        secret = bearer_secret(scope)
        credentials = self.credentials()
        try:
            if not secret:
                raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
            grant = await credentials.grant_for(secret)
            if grant is None:
                raise Unauthorized("invalid or revoked API key")
        except Unauthorized as exc:
            error = "invalid_token" if secret else None
            headers = {"WWW-Authenticate": credentials.challenge(error)}
            if _has_body(scope):
                headers["Connection"] = "close"  # the body stays unread: end the connection
            await problem_response(401, str(exc), headers=headers)(scope, receive, send)
            return
        except Exception as exc:
            if not is_transient(exc):
                raise
            log.warning("key check unavailable (%s)", describe(exc, 300))
            await problem_response(
                503,
                "the service is temporarily unavailable (its database is unreachable); "
                "the request was not carried out, retry later",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS), "Connection": "close"},
            )(scope, receive, send)
            return
        if (
            not grant.writable
            and not _mcp(scope)
            and not is_read_request(scope["method"], scope["path"])
        ):
            await problem_response(
                403,
                f"this credential is read-only: it may not {scope['method']} {scope['path']}",
                headers={"Connection": "close"} if _has_body(scope) else None,
            )(scope, receive, send)
            return
        scope[SCOPE_PROJECT], scope[SCOPE_KEY] = grant.project, hash_key(secret)
        scope[SCOPE_GRANT] = grant
        await self.app(scope, receive, send)


def _mcp(scope: Scope) -> bool:
    path: str = scope["path"]
    return path == "/mcp" or path.startswith("/mcp/")
