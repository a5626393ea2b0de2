"""The login form (a key in, an HttpOnly cookie out) and logout."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse
from starlette.responses import Response

from mnemo.api.deps import EngineDep, SettingsDep
from mnemo.console.errors import ConsoleRoute
from mnemo.console.rendering import render
from mnemo.console.session import (
    CSRF_COOKIE,
    KEY_COOKIE,
    CheckedSessionDep,
    ConsoleForbidden,
    ConsoleSession,
    check_csrf,
    clear_cookies,
    csrf_token_of,
    set_cookie,
)

router = APIRouter(route_class=ConsoleRoute)
HOME = "/console/memories"


def safe_next(target: str | None) -> str:
    """Only console paths of this server: never an open redirect."""
    if target and (target == "/console" or target.startswith(("/console/", "/console?"))):
        return target
    return HOME


def _anonymous(request: Request) -> ConsoleSession:
    token, new = csrf_token_of(request)
    return ConsoleSession(project="", via="cookie", csrf_token=token, new_csrf=new)


def _login_page(
    request: Request, next_url: str, error: str | None = None, status_code: int = 200
) -> Response:
    session = _anonymous(request)
    response = render(
        request,
        "login.html",
        None,
        {"next": next_url, "error": error, "csrf_token": session.csrf_token},
        status_code,
    )
    if session.new_csrf:
        set_cookie(request, response, CSRF_COOKIE, session.csrf_token)
    return response


@router.get("/login")
async def login_form(request: Request, settings: SettingsDep, next: str | None = None) -> Response:
    if settings.auth_disabled:
        return RedirectResponse(safe_next(next), status_code=303)
    reason = request.query_params.get("reason")
    return _login_page(request, safe_next(next), reason)


@router.post("/login")
async def login(
    request: Request,
    engine: EngineDep,
    settings: SettingsDep,
    key: Annotated[str, Form(max_length=512)] = "",
    next: Annotated[str, Form(max_length=2048)] = HOME,
) -> Response:
    if settings.auth_disabled:
        return RedirectResponse(safe_next(next), status_code=303)
    try:
        await check_csrf(request, _anonymous(request))
    except ConsoleForbidden as refused:
        return _login_page(request, safe_next(next), refused.message, 403)
    key = key.strip()
    project = await engine.project_for_key(key) if key else None
    if project is None:
        message = "invalid or revoked API key" if key else "enter an API key"
        return _login_page(request, safe_next(next), message, 401)
    response = RedirectResponse(safe_next(next), status_code=303)
    set_cookie(request, response, KEY_COOKIE, key)
    # A fresh CSRF token per login: a token planted before login is worthless after it.
    set_cookie(request, response, CSRF_COOKIE, secrets.token_urlsafe(32))
    return response


@router.post("/logout")
async def logout(session: CheckedSessionDep) -> Response:
    del session
    response = RedirectResponse("/console/login", status_code=303)
    clear_cookies(response)
    return response
