"""Groups: their topics, the pipeline as a graph, and editing the configuration."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse
from starlette.responses import Response

from mnemo.api.deps import EngineDep
from mnemo.api.routes.groups import GroupName
from mnemo.console.errors import ConsoleRoute
from mnemo.console.graph import pipeline_svg
from mnemo.console.group_editor import (
    DocumentRefused,
    EditorError,
    editable_yaml,
    parse_document,
    refusal,
)
from mnemo.console.rendering import render
from mnemo.console.session import CheckedSessionDep, ConsoleSession, SessionDep
from mnemo.domain.grants import require_project_wide, require_write
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import InvalidRequest
from mnemo.domain.templates import TEMPLATE_NAMES

router = APIRouter(route_class=ConsoleRoute)

MAX_DOCUMENT_CHARS = 200_000


def _may_change(session: ConsoleSession) -> None:
    require_write(session.access, "change a group")
    require_project_wide(session.access, "change a group")


@router.get("/groups")
async def groups_page(request: Request, session: SessionDep, engine: EngineDep) -> Response:
    groups = await engine.list_groups(session.project)
    context = {"groups": groups, "templates": TEMPLATE_NAMES, "errors": []}
    return render(request, "groups.html", session, context)


@router.post("/groups")
async def create_group(
    request: Request,
    session: CheckedSessionDep,
    engine: EngineDep,
    name: Annotated[str, Form(max_length=64)] = "",
    template: Annotated[str, Form(max_length=64)] = "default",
) -> Response:
    """A new group from a template, through `put_group` (then edit it on its page)."""
    _may_change(session)
    errors: list[EditorError] = []
    existing = {g.name for g in await engine.list_groups(session.project)}
    if name in existing:
        errors.append(EditorError("name", f"group '{name}' exists; edit it on its page"))
    else:
        try:
            await engine.put_group(session.project, name, {"template": template})
        except InvalidRequest as exc:
            errors = refusal(exc)
    if not errors:
        return RedirectResponse(f"/console/groups/{name}?saved=1", status_code=303)
    groups = await engine.list_groups(session.project)
    context = {"groups": groups, "templates": TEMPLATE_NAMES, "errors": errors, "name": name}
    return render(request, "groups.html", session, context, 400)


def _group_context(
    group: GroupConfig, text: str, errors: list[EditorError], etag: str
) -> dict[str, Any]:
    return {
        "group": group,
        "svg": pipeline_svg(group.pipeline, f"Pipeline of group {group.name}"),
        "document": text,
        "errors": errors,
        "etag": etag,
    }


@router.get("/groups/{name}")
async def group_page(
    request: Request, name: GroupName, session: SessionDep, engine: EngineDep
) -> Response:
    group = await engine.group(session.project, name)
    context = _group_context(group, editable_yaml(group), [], group.etag())
    context["saved"] = request.query_params.get("saved") == "1"
    return render(request, "group.html", session, context)


async def _save(
    engine: EngineDep, session: ConsoleSession, name: str, text: str, etag: str
) -> tuple[list[EditorError], bool]:
    """The errors of a save (none: stored), and whether it was refused as stale."""
    if len(text) > MAX_DOCUMENT_CHARS:
        return [EditorError("document", f"longer than {MAX_DOCUMENT_CHARS} characters")], False
    try:
        body = parse_document(text)
        await engine.put_group(session.project, name, body.as_document(), etag or None)
    except DocumentRefused as exc:
        return exc.errors, False
    except InvalidRequest as exc:
        if exc.kind == "stale":
            return [EditorError("document", STALE_MESSAGE)], True
        return refusal(exc), False
    return [], False


STALE_MESSAGE = (
    "someone saved this group after you opened it; your text was not saved (it is kept "
    "here to copy). Open the current configuration (Discard changes) and make your edit again."
)


@router.post("/groups/{name}")
async def save_group(
    request: Request,
    name: GroupName,
    session: CheckedSessionDep,
    engine: EngineDep,
    document: Annotated[str, Form()] = "",
    etag: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """Replace the group's configuration, only if it is still the one the editor was opened
    on (`etag`, as If-Match); on refusal the editor keeps the text and shows the errors
    beside it (and nothing is stored)."""
    _may_change(session)
    await engine.group(session.project, name)  # 404: the editor edits existing groups
    errors, stale = await _save(engine, session, name, document, etag)
    if not errors:
        return RedirectResponse(f"/console/groups/{name}?saved=1", status_code=303)
    current = await engine.group(session.project, name)
    # A stale editor keeps its old tag: saving again must not overwrite the other edit.
    context = _group_context(current, document, errors, etag)
    return render(request, "group.html", session, context, 412 if stale else 400)
