"""Tools that read memories: search, list (paged), get, history, and the groups."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mnemo.api.schemas import GroupList, GroupSummary, MemoryHistory, MemoryOut, MemoryPage
from mnemo.client.models import retrieval as retrieval_config
from mnemo.mcp.arguments import (
    Group,
    MemoryId,
    MemoryList,
    Properties,
    Retrieval,
    Text,
    Topics,
    UserId,
)
from mnemo.mcp.binding import current_client
from mnemo.mcp.problems import ARGUMENTS, refused


async def search_memories(
    query: Annotated[
        Text | None,
        Field(
            min_length=1,
            max_length=10_000,
            description="What to look for, in natural language. Not needed for fetch.",
        ),
    ] = None,
    retrieval: Retrieval = "hybrid",
    topics: Topics = None,
    user_id: UserId = None,
    group: Group = "default",
    properties: Properties = None,
    limit: Annotated[int, Field(ge=1, le=100, description="At most this many results.")] = 10,
) -> MemoryPage:
    """Search memories by meaning and keywords, best first, with scores in [0, 1].

    Pass the user_id to search a user's memories (user-scoped topics are invisible
    without it), and properties to narrow by scope (e.g. one conversation).
    """
    if query is None and retrieval != "fetch":
        raise refused(f"{ARGUMENTS}.query", f"{retrieval} search needs a query")
    found = await current_client().memories.search(
        query or retrieval,  # fetch ignores the query
        topics=topics,
        user_id=user_id,
        group=group,
        properties=properties,
        retrieval_config=retrieval_config(retrieval, limit),
    )
    memories = [MemoryOut.model_validate(m, from_attributes=True) for m in found]
    return MemoryPage(memories=memories, total=len(memories))


async def list_memories(
    topics: Topics = None,
    user_id: UserId = None,
    group: Group = "default",
    properties: Properties = None,
    limit: Annotated[int, Field(ge=1, le=100, description="Page size.")] = 20,
    offset: Annotated[int, Field(ge=0, description="Skip this many (for paging).")] = 0,
) -> MemoryList:
    """List memories without a query, newest first, a page at a time.

    `total` counts every match; pass `next_offset` back as `offset` for the next page.
    """
    page = await current_client().memories.list(
        topics=topics,
        user_id=user_id,
        group=group,
        properties=properties,
        limit=limit,
        offset=offset,
    )
    following = offset + len(page)
    return MemoryList(
        memories=[MemoryOut.model_validate(m, from_attributes=True) for m in page],
        total=page.total,
        offset=offset,
        next_offset=following if len(page) and following < page.total else None,
    )


async def get_memory(
    memory_id: MemoryId, user_id: UserId = None, group: Group = "default"
) -> MemoryOut:
    """One memory by id. Another user's memory (or one that does not exist) is not found
    (404); a user_id this project has never seen is refused (422)."""
    memory = await current_client().memories.get(memory_id, user_id=user_id, group=group)
    return MemoryOut.model_validate(memory, from_attributes=True)


async def memory_history(
    memory_id: MemoryId, user_id: UserId = None, group: Group = "default"
) -> MemoryHistory:
    """The prior versions of a memory, oldest first, each with the run that changed it."""
    versions = await current_client().memories.history(memory_id, user_id=user_id, group=group)
    return MemoryHistory.model_validate(
        {"memory_id": memory_id, "versions": versions}, from_attributes=True
    )


async def list_groups() -> GroupList:
    """The groups of this project and their topics: what each topic holds, whether it is
    per user, its scope properties and whether it keeps a single memory (bounded)."""
    groups: list[GroupSummary] = await current_client().groups.list()
    return GroupList(groups=groups)
