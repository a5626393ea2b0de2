"""The operator console's reads of committed memories: a project-wide browse and provenance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Memory
from mnemo.store.memories import newest_page
from mnemo.store.schema import memories
from mnemo.store.tenancy import memory_owner_filter, project_view


async def browse(
    conn: AsyncConnection,
    project: str,
    group: GroupConfig,
    *,
    topics: Sequence[str],
    user_id: str | None,
    properties: Mapping[str, str],
    limit: int,
    offset: int,
) -> tuple[list[Memory], int]:
    """One page of the group's memories, newest first, and how many match in all."""
    where = project_view(project, group, topics, user_id, properties)
    found, total, _ = await newest_page(conn, where, limit, offset)
    return found, total


async def run_ids(
    conn: AsyncConnection, project: str, group: GroupConfig, user_id: str | None, memory_id: str
) -> list[str] | None:
    """The runs that wrote a memory (deleted ones included), oldest first; None when the
    caller may not see it."""
    found = (
        await conn.execute(
            select(memories.c.run_ids).where(
                memories.c.id == memory_id, memory_owner_filter(project, group, user_id)
            )
        )
    ).first()
    return list(found.run_ids) if found else None
