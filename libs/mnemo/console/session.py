"""Who is using the console: the API key from the login cookie or a bearer header, and the
CSRF token that state-changing forms must echo.

- The key cookie is HttpOnly, SameSite=Strict and scoped to /console; every request
  re-validates the key (cached briefly by the engine), so a revoked key stops working.
- CSRF: a random token in a second SameSite=Strict cookie (double submit, so gateway
  replicas need no shared secret) must come back in the form or an `X-CSRF-Token` header,
  and a browser's Origin (or Referer) must name this host. Requests authenticated by an
  `Authorization` header are exempt: browsers never attach it on their own.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Annotated, Literal
from urllib.parse import urlsplit

from fastapi import Depends, Request, Response

from mnemo.api.deps import EngineDep, SettingsDep
from mnemo.domain.grants import Grant

KEY_COOKIE = "mnemo_console_key"
CSRF_COOKIE = "mnemo_console_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
COOKIE_PATH = "/console"
LOGIN_PATH = "/console/login"


class LoginRequired(Exception):
    """No usable key: browsers go to the login page, with where they were going."""

    def __init__(self, next_url: str, reason: str | None = None) -> None:
        super().__init__(reason or "login required")
        self.next_url = next_url
        self.reason = reason


class ConsoleForbidden(Exception):
    """A request the console refuses outright (a bad bearer key, a failed CSRF check)."""

    def __init__(self, status: Literal[401, 403], message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class ConsoleSession:
    project: str
    # "cookie": logged in through the form; "bearer": Authorization header; "open": auth
    # disabled on a loopback server.
    via: Literal["cookie", "bearer", "open"]
    csrf_token: str
    # True when the CSRF cookie is new and the response must set it.
    new_csrf: bool
    # What the key may do (read-only, bound to one user): pages show and do only that.
    grant: Grant | None = None

    @property
    def access(self) -> Grant:
        return self.grant or Grant(self.project)


def csrf_token_of(request: Request) -> tuple[str, bool]:
    """The request's CSRF token, or a new one (and True) when it has none."""
    token = request.cookies.get(CSRF_COOKIE)
    if token and 20 <= len(token) <= 100:
        return token, False
    return secrets.token_urlsafe(32), True


def _bearer(request: Request) -> str | None:
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else None


def _here(request: Request) -> str:
    """Where to return after logging in: this page, or for a form post the page it was on."""
    if request.method != "GET":
        referer = urlsplit(request.headers.get("referer", ""))
        same_host = referer.netloc.lower() == request.headers.get("host", "").lower()
        return (
            referer.path + (f"?{referer.query}" if referer.query else "")
            if same_host
            else "/console"
        )
    return request.url.path + (f"?{request.url.query}" if request.url.query else "")


async def console_session(
    request: Request, engine: EngineDep, settings: SettingsDep
) -> ConsoleSession:
    """The caller's project; LoginRequired (or a 401 for a bad bearer key) otherwise."""
    token, new = csrf_token_of(request)
    if settings.auth_disabled:
        return ConsoleSession(settings.project, "open", token, new)
    bearer = _bearer(request)
    if bearer is not None:
        grant = await engine.grant_for_key(bearer) if bearer else None
        if grant is None:
            raise ConsoleForbidden(401, "invalid or revoked API key")
        return ConsoleSession(grant.project, "bearer", token, new, grant)
    key = request.cookies.get(KEY_COOKIE)
    if not key:
        raise LoginRequired(_here(request))
    grant = await engine.grant_for_key(key)
    if grant is None:
        raise LoginRequired(_here(request), "your key is no longer valid; log in again")
    return ConsoleSession(grant.project, "cookie", token, new, grant)


SessionDep = Annotated[ConsoleSession, Depends(console_session)]


def same_origin(request: Request) -> bool:
    """False when the browser says the request comes from another site. The host is
    compared, not the scheme, so TLS ending at a reverse proxy does not break forms."""
    source = request.headers.get("origin") or request.headers.get("referer")
    if not source or source == "null":
        return source is None
    return urlsplit(source).netloc.lower() == request.headers.get("host", "").lower()


async def check_csrf(request: Request, session: ConsoleSession) -> None:
    """Refuse a state-changing request that a page of another site could have sent."""
    if session.via == "bearer":
        return
    if not same_origin(request):
        raise ConsoleForbidden(403, "the request came from another site")
    sent = request.headers.get(CSRF_HEADER)
    if sent is None:
        form = await request.form()
        value = form.get(CSRF_FIELD)
        sent = value if isinstance(value, str) else None
    cookie = request.cookies.get(CSRF_COOKIE)
    if not (sent and cookie and hmac.compare_digest(sent, cookie)):
        raise ConsoleForbidden(
            403, "the form's security token is missing or stale; reload the page and try again"
        )


async def csrf_checked(request: Request, session: SessionDep) -> ConsoleSession:
    """A session whose request passed the CSRF check (for POST routes)."""
    await check_csrf(request, session)
    return session


CheckedSessionDep = Annotated[ConsoleSession, Depends(csrf_checked)]


def set_cookie(request: Request, response: Response, name: str, value: str) -> None:
    response.set_cookie(
        name,
        value,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def clear_cookies(response: Response) -> None:
    for name in (KEY_COOKIE, CSRF_COOKIE):
        response.delete_cookie(name, path=COOKIE_PATH, httponly=True, samesite="strict")
