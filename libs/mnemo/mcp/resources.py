"""MCP resources: the project's groups and their topics, so an agent knows what to store
where, and its memories: a scope's newest memories, and one memory by id.

Memories are addressed as the tools address them: by group, and by `user_id` for the
user-scoped topics (a query parameter). Without `user_id` only the topics shared by the
project are read; another user's memory is not found (404), and a user id the project has
never seen is Engram's 422, as on the REST API.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from mnemo.api.schemas import GroupList, MemoryOut, MemoryPage
from mnemo.client.errors import MnemoError
from mnemo.domain.search import TopicSelector
from mnemo.mcp.binding import current_client

JSON = "application/json"


async def groups() -> str:
    """Every group of the project with its topics: name, description, user scoping, scope
    properties and whether the topic keeps one memory per scope (bounded)."""
    async with _reported():
        found = await current_client().groups.list()
    return GroupList(groups=found).model_dump_json()


async def group(name: str) -> str:
    """One group's full configuration: description, topics and the pipeline that maintains
    them (extraction, buffering, reconciliation, commit)."""
    async with _reported():
        config = await current_client().groups.get(name)
    return config.model_dump_json(exclude_none=True)


SCOPE_PAGE = 100  # Engram's largest page; `list_memories` pages further


async def memories(group: str, user_id: str | None = None) -> str:
    """The newest memories of a scope (at most 100; `total` counts all): the user's own
    and the group's shared topics, or without user_id the shared topics only."""
    client = current_client()
    async with _reported():
        topics: list[str | TopicSelector] | None = None
        if user_id is None:  # a list naming no user may not select user-scoped topics
            config = await client.groups.get(group)
            topics = [t.name for t in config.topics if not t.scoping.user_scoped and not t.internal]
            if not topics:
                return MemoryPage(memories=[], total=0).model_dump_json(exclude_none=True)
        page = await client.memories.list(
            topics=topics, user_id=user_id, group=group, limit=SCOPE_PAGE
        )
    found = [MemoryOut.model_validate(m, from_attributes=True) for m in page]
    return MemoryPage(memories=found, total=page.total).model_dump_json(exclude_none=True)


async def memory(group: str, memory_id: str, user_id: str | None = None) -> str:
    """One memory by id; pass user_id for a memory of a user-scoped topic."""
    async with _reported():
        found = await current_client().memories.get(memory_id, user_id=user_id, group=group)
    return MemoryOut.model_validate(found, from_attributes=True).model_dump_json(exclude_none=True)


@asynccontextmanager
async def _reported() -> AsyncIterator[None]:
    """Client errors become resource errors the caller reads (not an internal error)."""
    try:
        yield
    except MnemoError as exc:
        raise ResourceError(str(exc)) from exc


def register_resources(server: MCPServer) -> None:
    server.resource("mnemo://groups", name="groups", title="Groups and topics", mime_type=JSON)(
        groups
    )
    server.resource(
        "mnemo://groups/{name}", name="group", title="A group's configuration", mime_type=JSON
    )(group)
    server.resource(
        "mnemo://groups/{group}/memories{?user_id}",
        name="memories",
        title="A scope's newest memories",
        mime_type=JSON,
    )(memories)
    server.resource(
        "mnemo://groups/{group}/memories/{memory_id}{?user_id}",
        name="memory",
        title="A memory by id",
        mime_type=JSON,
    )(memory)
