"""Reading and administering committed memories. Writes of pipelines go through commits;
erasure is `mnemo.store.erasure`'s."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Memory, MemoryStatus, MemoryVersion
from mnemo.domain.search import MemoryQuery
from mnemo.store.as_of import reading_at
from mnemo.store.commits import archive_row
from mnemo.store.rows import MEMORY_COLUMNS, memory_from_row
from mnemo.store.schema import memories, memory_versions
from mnemo.store.tenancy import memory_owner_filter, visible_memories

# What versions keep only for as-of ranking: not read back for history.
_RANKING = frozenset({"embedding", "tsv", "tsv_length"})


async def get(
    conn: AsyncConnection, project: str, group: GroupConfig, user_id: str | None, memory_id: str
) -> Memory | None:
    """An active memory the caller may see; None for missing *and* for other owners."""
    row = (
        await conn.execute(
            select(*MEMORY_COLUMNS).where(
                memories.c.id == memory_id,
                memories.c.status == MemoryStatus.active,
                memory_owner_filter(project, group, user_id),
            )
        )
    ).first()
    return memory_from_row(row) if row else None


async def list_(
    conn: AsyncConnection, query: MemoryQuery, group: GroupConfig, offset: int = 0
) -> tuple[list[Memory], int]:
    """Newest first, one page, and how many match; as of `query.as_of` when it is set."""
    reader = reading_at(conn, query.as_of)
    return await newest_page(reader, visible_memories(query, group), query.limit, offset)


async def newest_page(
    conn: AsyncConnection, where: ColumnElement[bool], limit: int, offset: int = 0
) -> tuple[list[Memory], int]:
    """The memories matching `where`, newest first, one page; and how many match in all."""
    total = (
        await conn.execute(select(func.count()).select_from(memories).where(where))
    ).scalar_one()
    rows = (
        await conn.execute(
            select(*MEMORY_COLUMNS)
            .where(where)
            .order_by(memories.c.updated_at.desc(), memories.c.id)
            .limit(limit)
            .offset(offset)
        )
    ).all()
    return [memory_from_row(r) for r in rows], int(total)


async def archive(
    conn: AsyncConnection,
    project: str,
    group: GroupConfig,
    user_id: str | None,
    memory_id: str,
    now: datetime,
) -> bool:
    """Delete through the API: out of search, prior content kept in history."""
    row = (
        await conn.execute(
            select(memories)
            .where(
                memories.c.id == memory_id,
                memories.c.status == MemoryStatus.active,
                memory_owner_filter(project, group, user_id),
            )
            .with_for_update()
        )
    ).first()
    if row is None:
        return False
    await archive_row(conn, row._mapping, None, now)
    return True


async def history(
    conn: AsyncConnection, project: str, group: GroupConfig, user_id: str | None, memory_id: str
) -> list[MemoryVersion] | None:
    """Prior versions, oldest first; None when the caller may not see the memory."""
    owner = (
        await conn.execute(
            select(memories.c.id).where(
                memories.c.id == memory_id, memory_owner_filter(project, group, user_id)
            )
        )
    ).first()
    if owner is None:
        return None
    rows = (
        await conn.execute(
            select(*(c for c in memory_versions.c if c.name not in _RANKING))
            .where(memory_versions.c.memory_id == memory_id)
            .order_by(memory_versions.c.version)
        )
    ).all()
    return [
        MemoryVersion(
            memory_id=r.memory_id,
            version=r.version,
            content=r.content,
            valid_from=r.valid_from,
            valid_to=r.valid_to,
            change=r.change,
            run_id=r.run_id,
            event_time=r.event_time,
            event_time_end=r.event_time_end,
        )
        for r in rows
    ]
