"""Engram v1 memory routes (add, search, list, get, delete), plus mnemo's history,
provenance and hard-erase extensions."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import AfterValidator

from mnemo.api.deps import GrantedDep
from mnemo.api.engram_releases import wrapped, wraps_search_results
from mnemo.api.schemas import (
    AddBody,
    AddResponse,
    ListBody,
    MemoryHistory,
    MemoryOut,
    MemoryPage,
    MemorySources,
    ProvenanceOut,
)
from mnemo.domain.idempotency import HEADER, KEY_CHARS, KEY_PATTERN
from mnemo.domain.limits import USER_ID_CHARS
from mnemo.domain.requests import SearchRequest
from mnemo.domain.scope import check_user_id

router = APIRouter(prefix="/v1/memories", tags=["memories"])

UserQuery = Annotated[
    str | None,
    Query(max_length=USER_ID_CHARS, description="Owner of user-scoped memories"),
    AfterValidator(lambda user: None if user is None else check_user_id(user)),
]
GroupQuery = Annotated[str | None, Query(max_length=64, description="Group; default 'default'")]


IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias=HEADER,
        min_length=1,
        max_length=KEY_CHARS,
        pattern=KEY_PATTERN,
        description="mnemo extension: names this add in the project for "
        "MNEMO_IDEMPOTENCY_WINDOW_SECONDS (24 h). A repeat with the same key and body "
        "returns the first add's run (`Idempotent-Replayed: true`) and stores nothing; the "
        "same key with another body answers 409.",
    ),
]


@router.post("", response_model=AddResponse, response_model_exclude_none=True)
async def add_memories(
    body: AddBody,
    granted: GrantedDep,
    response: Response,
    idempotency_key: IdempotencyKeyHeader = None,
) -> AddResponse:
    """Record an add durably and start its pipeline run; poll the run for results."""
    admission = await granted.admit(body, idempotency_key)
    if admission.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    run = admission.run
    return AddResponse(run_id=run.run_id, status=run.status, error=run.error)


@router.post("/search", response_model=MemoryPage, response_model_exclude_none=True)
async def search_memories(
    body: SearchRequest, granted: GrantedDep, request: Request
) -> MemoryPage | JSONResponse:
    """Vector, BM25, hybrid or fetch retrieval over the selected topics, with scores."""
    found = await granted.search(body)
    page = MemoryPage.model_validate({"memories": found, "total": len(found)}, from_attributes=True)
    if wraps_search_results(request.headers.get("user-agent")):
        return JSONResponse(wrapped(page.model_dump(mode="json", exclude_none=True)))
    return page


@router.post("/list", response_model=MemoryPage, response_model_exclude_none=True)
async def list_memories(body: ListBody, granted: GrantedDep) -> MemoryPage:
    """List memories without a query, newest first; `total` counts all matches. Filters as in
    search: `topics` (with per-topic `properties`), `user_id`, `properties`, `limit`.
    mnemo extensions: `next_cursor` out and `cursor` in page through every match, stable
    under concurrent writes; `offset`; `as_of`."""
    page = await granted.list_page(body)
    return MemoryPage.model_validate(
        {"memories": page.memories, "total": page.total, "next_cursor": page.next_cursor},
        from_attributes=True,
    )


@router.get("/{memory_id}", response_model=MemoryOut, response_model_exclude_none=True)
async def get_memory(
    memory_id: str,
    granted: GrantedDep,
    user_id: UserQuery = None,
    group: GroupQuery = None,
) -> MemoryOut:
    """One memory. Memories of other users, groups or projects are reported as 404, as
    missing ones are; a `user_id` the project has never seen is Engram's 422."""
    memory = await granted.get_memory(memory_id, user_id, group)
    return MemoryOut.model_validate(memory, from_attributes=True)


@router.delete("/{memory_id}", status_code=204, response_class=Response)
async def delete_memory(
    memory_id: str,
    granted: GrantedDep,
    user_id: UserQuery = None,
    group: GroupQuery = None,
    erase: Annotated[
        bool,
        Query(description="mnemo extension: hard-erase the memory and its history (GDPR)"),
    ] = False,
) -> Response:
    """Delete a memory (kept in history); with `?erase=true` remove every trace of it.
    404 and 422 as for reading it."""
    await granted.delete_memory(memory_id, user_id, group, erase)
    return Response(status_code=204)


@router.get(
    "/{memory_id}/history",
    response_model=MemoryHistory,
    response_model_exclude_none=True,
    tags=["mnemo extensions"],
)
async def memory_history(
    memory_id: str,
    granted: GrantedDep,
    user_id: UserQuery = None,
    group: GroupQuery = None,
) -> MemoryHistory:
    """mnemo extension: the prior versions of a memory with the runs that changed them."""
    versions = await granted.memory_history(memory_id, user_id, group)
    return MemoryHistory.model_validate(
        {"memory_id": memory_id, "versions": versions}, from_attributes=True
    )


@router.get(
    "/{memory_id}/provenance",
    response_model=ProvenanceOut,
    response_model_exclude_none=True,
    tags=["mnemo extensions"],
)
async def memory_provenance(
    memory_id: str,
    granted: GrantedDep,
    user_id: UserQuery = None,
    group: GroupQuery = None,
) -> ProvenanceOut:
    """mnemo extension: every version of a memory with the run that wrote it (operation,
    event times, the run's raw input while retained). 404 as for reading the memory."""
    found = await granted.memory_provenance(memory_id, user_id, group)
    return ProvenanceOut.model_validate(found, from_attributes=True)


@router.get(
    "/{memory_id}/sources",
    response_model=MemorySources,
    response_model_exclude_none=True,
    tags=["mnemo extensions"],
)
async def memory_sources(
    memory_id: str,
    granted: GrantedDep,
    user_id: UserQuery = None,
    group: GroupQuery = None,
) -> MemorySources:
    """mnemo extension: the episodes a consolidated rule rests on, oldest first, whatever
    their status (consolidated, active or deleted by the source policy); empty for a memory
    that is not a rule."""
    found = await granted.memory_sources(memory_id, user_id, group)
    return MemorySources.model_validate(
        {"memory_id": memory_id, "sources": found}, from_attributes=True
    )
