"""Errors on console routes become HTML pages (or a login redirect), not problem JSON."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute
from starlette.responses import Response

from mnemo.api.problems import validation_errors
from mnemo.api.statuses import status_of
from mnemo.console.rendering import is_htmx, render
from mnemo.console.session import LOGIN_PATH, ConsoleForbidden, LoginRequired
from mnemo.domain.grants import Forbidden
from mnemo.domain.requests import InvalidRequest, NotFound

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


def _login_redirect(request: Request, exc: LoginRequired) -> Response:
    query = {"next": exc.next_url, **({"reason": exc.reason} if exc.reason else {})}
    target = f"{LOGIN_PATH}?{urlencode(query)}"
    if request.headers.get("hx-request") == "true":
        # htmx follows HX-Redirect with a full navigation (a 3xx would be followed by the
        # XHR itself and the login page swapped into a fragment).
        return Response(status_code=401, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


def error_page(request: Request, status: int, title: str, messages: list[str]) -> Response:
    context = {"title": title, "messages": messages, "status": status}
    name = "_error.html" if is_htmx(request) else "error.html"
    response = render(request, name, None, context, status)
    if status == 401:
        response.headers["WWW-Authenticate"] = "Bearer"
    return response


class ConsoleRoute(APIRoute):
    """Catches what the engine and the session raise, including inside dependencies."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except LoginRequired as exc:
                return _login_redirect(request, exc)
            except ConsoleForbidden as exc:
                title = "Not allowed" if exc.status == 403 else "Not signed in"
                return error_page(request, exc.status, title, [exc.message])
            except Forbidden as exc:
                return error_page(request, 403, "Not allowed", [str(exc)])
            except NotFound as exc:
                return error_page(request, 404, "Not found", [str(exc) or "not found"])
            except InvalidRequest as exc:
                details = [exc.detail, *(e.message for e in exc.errors if e.message != exc.detail)]
                return error_page(request, status_of(exc), "Request refused", details)
            except RequestValidationError as exc:
                _status, detail, errors = validation_errors(exc.errors())
                lines = [f"{e.location}: {e.message}" for e in errors]
                return error_page(request, 400, "Invalid request", [detail, *lines])

        return handle
