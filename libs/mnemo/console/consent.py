"""The consent page of the built-in OAuth server (`mnemo.api.oauth.builtin`).

An MCP client's `/authorize` request lands here. The page sits in the console, so whoever
approves is signed in with a key of the project (or a bearer key): it shows the client, the
project and the scopes asked for. The token issued can do no more than that key: a
read-only key gives read-only tokens, a key bound to a user gives tokens bound to that
user, and an unbound key may bind the token to one user_id here.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import RedirectResponse
from starlette.responses import Response

from mnemo.api.oauth.builtin import BuiltinProvider
from mnemo.console.errors import ConsoleRoute
from mnemo.console.rendering import render
from mnemo.console.session import CheckedSessionDep, ConsoleSession, SessionDep
from mnemo.domain.grants import SCOPE_READ, SCOPE_WRITE, Grant, bound
from mnemo.domain.requests import NotFound
from mnemo.domain.scope import InvalidUserId
from mnemo.store.oauth import TokenRecord

router = APIRouter(route_class=ConsoleRoute)

RequestId = Annotated[str, Query(alias="request", min_length=10, max_length=100)]


def _provider(request: Request) -> BuiltinProvider:
    provider: BuiltinProvider | None = request.app.state.credentials.builtin
    if provider is None:
        raise NotFound("the built-in authorization server is off (MNEMO_OAUTH_BUILTIN)")
    return provider


async def _pending(request: Request, request_id: str) -> tuple[BuiltinProvider, TokenRecord]:
    provider = _provider(request)
    pending = await provider.consent(request_id)
    if pending is None:
        raise NotFound("this authorization request has expired or was answered already")
    return provider, pending


def _context(
    session: ConsoleSession, request_id: str, pending: TokenRecord, error: str | None = None
) -> dict[str, object]:
    redirect = str(pending.data["params"]["redirect_uri"])
    return {
        "request_id": request_id,
        "client_name": pending.data.get("client_name", pending.client_id),
        "redirect_host": urlsplit(redirect).netloc,
        "scopes": pending.scopes,
        "asks_write": SCOPE_WRITE in pending.scopes,
        "may_write": session.access.writable,
        "resource": pending.resource,
        "error": error,
    }


@router.get("/oauth/consent")
async def consent_page(request: Request, session: SessionDep, request_id: RequestId) -> Response:
    _, pending = await _pending(request, request_id)
    return render(request, "oauth_consent.html", session, _context(session, request_id, pending))


@router.post("/oauth/consent")
async def answer_consent(
    request: Request,
    session: CheckedSessionDep,
    request_id: Annotated[str, Form(alias="request", min_length=10, max_length=100)],
    decision: Annotated[str, Form(max_length=16)] = "deny",
    write: Annotated[bool, Form()] = False,
    user_id: Annotated[str, Form(max_length=256)] = "",
) -> Response:
    provider, pending = await _pending(request, request_id)
    if decision != "approve":
        target = await provider.deny(request_id)
    else:
        access = session.access
        writable = access.writable and write and SCOPE_WRITE in pending.scopes
        try:
            grant: Grant = bound(
                access.project, writable, access.user_id or user_id.strip() or None
            )
        except InvalidUserId as exc:
            context = _context(session, request_id, pending, str(exc))
            return render(request, "oauth_consent.html", session, context, 400)
        scopes = [SCOPE_READ, *([SCOPE_WRITE] if writable else [])]
        target = await provider.approve(request_id, grant, scopes)
    if target is None:
        raise NotFound("this authorization request has expired or was answered already")
    return RedirectResponse(target, status_code=303)
