"""Runs: the project's recent runs, one run's operations and error, and retry."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import RedirectResponse
from starlette.responses import Response

from mnemo.api.deps import EngineDep
from mnemo.api.statuses import status_of
from mnemo.console.errors import ConsoleRoute
from mnemo.console.forms import FormError, blank_to_none, decode_cursor, encode_cursor
from mnemo.console.rendering import is_htmx, render
from mnemo.console.session import CheckedSessionDep, ConsoleSession, SessionDep
from mnemo.core.access import visible_run
from mnemo.domain.grants import require_write, user_for
from mnemo.domain.memory import Run, RunState
from mnemo.domain.requests import InvalidRequest

router = APIRouter(route_class=ConsoleRoute)

PAGE_SIZE = 50
RunId = Annotated[str, Path(max_length=64)]


@router.get("/runs")
async def runs_page(
    request: Request,
    session: SessionDep,
    engine: EngineDep,
    status: Annotated[str | None, Query(max_length=16)] = None,
    user: Annotated[str | None, Query(max_length=256)] = None,
    before: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    errors: dict[str, str] = {}
    state = None
    if wanted := blank_to_none(status):
        try:
            state = RunState(wanted)
        except ValueError:
            errors["status"] = f"choose one of {', '.join(s.value for s in RunState)}"
    cursor = None
    try:
        cursor = decode_cursor(before)
    except FormError as exc:
        errors[exc.field] = exc.message
    found: list[Run] = []
    if not errors:
        # One more than a page tells whether an older page exists.
        found = await engine.list_runs(
            session.project,
            status=state,
            user_id=user_for(session.access, blank_to_none(user)),
            before=cursor,
            limit=PAGE_SIZE + 1,
        )
    older = None
    if len(found) > PAGE_SIZE:
        found = found[:PAGE_SIZE]
        older = encode_cursor(found[-1].created_at, found[-1].run_id)
    context = {
        "runs": found,
        "status": status or "",
        "user": user or "",
        "older": older,
        "paged": cursor is not None,
        "errors": errors,
        "states": [s.value for s in RunState],
    }
    name = "_runs_body.html" if is_htmx(request) else "runs.html"
    return render(request, name, session, context, 400 if errors else 200)


async def _run_context(
    engine: EngineDep, session: ConsoleSession, run_id: str
) -> dict[str, object]:
    run = await visible_run(engine, session.access, run_id)  # 404 outside project or user
    submitted = await engine.run_input(session.project, run_id)
    return {"run": run, "submitted": submitted}


@router.get("/runs/{run_id}")
async def run_page(
    request: Request, run_id: RunId, session: SessionDep, engine: EngineDep
) -> Response:
    context = await _run_context(engine, session, run_id)
    context["retried"] = request.query_params.get("retried") == "1"
    return render(request, "run.html", session, context)


@router.get("/runs/{run_id}/summary")
async def run_summary(
    request: Request, run_id: RunId, session: SessionDep, engine: EngineDep
) -> Response:
    """The status block of a run page; htmx polls it until the run is completed or failed."""
    context = await _run_context(engine, session, run_id)
    return render(request, "_run_summary.html", session, context)


@router.post("/runs/{run_id}/retry")
async def retry_run(
    request: Request, run_id: RunId, session: CheckedSessionDep, engine: EngineDep
) -> Response:
    """Re-drive a failed run through the same engine call as `POST /v1/runs/{id}/retry`."""
    require_write(session.access, "retry a run")
    await visible_run(engine, session.access, run_id)
    try:
        await engine.retry_run(session.project, run_id)
    except InvalidRequest as exc:
        if exc.kind == "missing":
            raise
        context = await _run_context(engine, session, run_id)
        context["retry_error"] = exc.detail
        return render(request, "run.html", session, context, status_of(exc))
    return RedirectResponse(f"/console/runs/{run_id}?retried=1", status_code=303)
