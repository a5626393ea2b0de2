"""Jinja2 rendering of console pages: shared context, filters and security headers."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates
from starlette.responses import Response

from mnemo.console.session import CSRF_COOKIE, ConsoleSession, set_cookie

TEMPLATES_DIR = Path(__file__).parent / "templates"
STATIC_DIR = Path(__file__).parent / "static"

# Scripts and styles come only from /console/static: no inline script can run, even if some
# text escaped escaping. htmx is told not to inject its indicator <style> (see base.html).
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def _when(value: datetime | None) -> str:
    if value is None:
        return "—"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def _number(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "—"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.{digits}f}"


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    if value < 1:
        return f"{value * 1000:.1f} ms"
    return f"{value:.2f} s"


templates = Jinja2Templates(directory=TEMPLATES_DIR)
templates.env.filters.update(when=_when, pretty_json=_pretty_json, number=_number, seconds=_seconds)
templates.env.trim_blocks = True
templates.env.lstrip_blocks = True


def render(
    request: Request,
    name: str,
    session: ConsoleSession | None,
    context: dict[str, Any],
    status_code: int = 200,
) -> Response:
    """A page (or an htmx fragment) with the context every page shares."""
    settings = request.app.state.settings
    shared = {
        "session": session,
        "project": session.project if session else None,
        "csrf_token": session.csrf_token if session else None,
        "distributed": settings.mode == "distributed",
        "path": request.url.path,
    }
    response = templates.TemplateResponse(
        request, name, {**shared, **context}, status_code=status_code
    )
    response.headers.update(SECURITY_HEADERS)
    if session is not None and session.new_csrf:
        set_cookie(request, response, CSRF_COOKIE, session.csrf_token)
    return response


def is_htmx(request: Request) -> bool:
    """htmx asks for a fragment (not on history restore, which needs the whole page)."""
    return (
        request.headers.get("hx-request") == "true"
        and request.headers.get("hx-history-restore-request") != "true"
    )
