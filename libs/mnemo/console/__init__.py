"""The operator console: server-rendered pages at /console, behind the API's keys.

Jinja2 templates, htmx 2.0.11 (the npm package `htmx.org`, vendored under static/ with its
0BSD licence: no build step, nothing fetched at run time) for partial updates, and a small
stylesheet. Pages read and write through the Engine only.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

from mnemo.console import consent, dlq, groups, health, login, memories, runs, timeline
from mnemo.console.errors import ConsoleRoute
from mnemo.console.rendering import STATIC_DIR
from mnemo.domain.requests import NotFound


def install_console(app: FastAPI) -> None:
    """Mount the console's pages and static files on the gateway."""
    router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

    @router.get("")
    @router.get("/")
    async def home() -> RedirectResponse:
        return RedirectResponse("/console/memories", status_code=303)

    for module in (login, memories, timeline, runs, dlq, health, groups, consent):
        router.include_router(module.router)

    @router.get("/{unknown:path}")
    async def no_such_page(unknown: str) -> None:
        raise NotFound(f"the console has no page '/console/{unknown}'")

    # Static files first: the catch-all above would shadow them.
    app.mount("/console/static", StaticFiles(directory=STATIC_DIR), name="console-static")
    app.include_router(router)
