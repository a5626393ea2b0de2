"""Memories: browse a group across users, search it in any mode, open one memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from pydantic import ValidationError
from starlette.responses import Response

from mnemo.api.deps import EngineDep
from mnemo.console.errors import ConsoleRoute
from mnemo.console.forms import FormError, Page, blank_to_none, parse_properties
from mnemo.console.provenance import memory_provenance
from mnemo.console.rendering import is_htmx, render
from mnemo.console.session import SessionDep
from mnemo.domain.grants import user_for
from mnemo.domain.memory import Memory
from mnemo.domain.requests import InvalidRequest, NotFound, RetrievalConfig, SearchRequest

router = APIRouter(route_class=ConsoleRoute)

PAGE_SIZE = 25
MODES = ("browse", "hybrid", "vector", "bm25", "fetch")
Text = Annotated[str | None, Query(max_length=10_000)]


@dataclass
class MemoryFilters:
    """The form of the memories page, as typed (echoed back on errors)."""

    group: str = "default"
    topic: str | None = None
    user: str | None = None
    properties: str | None = None
    q: str | None = None
    mode: str = "browse"
    limit: int = 10
    page: int = 1
    errors: dict[str, str] = field(default_factory=dict)

    def search_request(self, properties: dict[str, str]) -> SearchRequest:
        """The request an agent would send for the same search (fetch ignores the text)."""
        return SearchRequest(
            query=self.q or "*",
            topics=[self.topic] if self.topic else None,
            user_id=self.user,
            group=self.group,
            properties=properties or None,
            retrieval_config=RetrievalConfig.model_validate(
                {"retrieval_type": self.mode, "limit": self.limit}
            ),
        )


async def _find(
    engine: EngineDep, project: str, f: MemoryFilters
) -> tuple[list[Memory], Page | None]:
    try:
        properties = parse_properties(f.properties)
    except FormError as exc:
        f.errors[exc.field] = exc.message
        return [], None
    if f.mode not in MODES:
        f.errors["mode"] = f"choose one of {', '.join(MODES)}"
        return [], None
    if f.mode == "browse":
        found, total = await engine.browse_memories(
            project,
            f.group,
            topic=f.topic,
            user_id=f.user,
            properties=properties,
            limit=PAGE_SIZE,
            offset=(f.page - 1) * PAGE_SIZE,
        )
        return found, Page(f.page, PAGE_SIZE, total)
    if not f.q and f.mode != "fetch":
        f.errors["q"] = f"a {f.mode} search needs a query"
        return [], None
    try:
        return await engine.search(project, f.search_request(properties)), None
    except ValidationError as exc:
        f.errors["form"] = "; ".join(str(e["msg"]) for e in exc.errors())
        return [], None


@router.get("/memories")
async def memories_page(
    request: Request,
    session: SessionDep,
    engine: EngineDep,
    group: Annotated[str, Query(max_length=64)] = "default",
    topic: Annotated[str | None, Query(max_length=64)] = None,
    user: Annotated[str | None, Query(max_length=256)] = None,
    properties: Text = None,
    q: Text = None,
    mode: Annotated[str, Query(max_length=16)] = "browse",
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
) -> Response:
    if request.headers.get("hx-trigger-name") == "group":
        topic = None  # another group's topics: the old choice means nothing there
    f = MemoryFilters(
        group=group,
        topic=blank_to_none(topic),
        user=user_for(session.access, blank_to_none(user)),
        properties=properties,
        q=blank_to_none(q),
        mode=mode,
        limit=limit,
        page=page,
    )
    groups = await engine.list_groups(session.project)
    found: list[Memory] = []
    paging = None
    try:
        found, paging = await _find(engine, session.project, f)
    except InvalidRequest as exc:
        f.errors["form"] = "; ".join([exc.detail, *(e.message for e in exc.errors)])
    selected = next((g for g in groups if g.name == f.group), None)
    expired: set[str] = set()
    if found and selected is not None and any(t.expires for t in selected.topics):
        expired = await engine.expired_memory_ids(session.project, f.group, [m.id for m in found])
    producers = await engine.memory_producers(session.project, [m.id for m in found])
    context = {
        "f": f, "groups": groups, "group": selected, "memories": found, "page": paging,
        "expired": expired, "producers": producers,
    }  # fmt: skip
    name = "_memories_body.html" if is_htmx(request) else "memories.html"
    return render(request, name, session, context, 400 if f.errors else 200)


@router.get("/memories/{memory_id}")
async def memory_page(
    request: Request,
    memory_id: Annotated[str, Path(max_length=64)],
    session: SessionDep,
    engine: EngineDep,
    group: Annotated[str, Query(max_length=64)] = "default",
    user: Annotated[str | None, Query(max_length=256)] = None,
) -> Response:
    user = user_for(session.access, blank_to_none(user))
    project = session.project
    provenance = await memory_provenance(engine, project, group, user, memory_id)  # 404 if unseen
    try:
        memory = await engine.get_memory(project, group, user, memory_id)
    except NotFound:
        memory = None  # deleted or consolidated: its history remains
    context = {
        "memory_id": memory_id,
        "memory": memory,
        "group_name": group,
        "user": user,
        "provenance": provenance,
    }
    return render(request, "memory.html", session, context)
