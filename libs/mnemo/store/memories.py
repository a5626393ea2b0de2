"""Reading and administering committed memories. Writes of pipelines go through commits;
erasure is `mnemo.store.erasure`'s."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, or_, select
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
    conn: AsyncConnection,
    query: MemoryQuery,
    group: GroupConfig,
    offset: int = 0,
    after: tuple[datetime, str] | None = None,
) -> tuple[list[Memory], int, bool]:
    """Newest first, one page, how many match, and whether more follow; as of
    `query.as_of` when it is set. `after`: the (updated_at, id) the previous page ended on."""
    reader = reading_at(conn, query.as_of)
    return await newest_page(reader, visible_memories(query, group), query.limit, offset, after)


async def newest_page(
    conn: AsyncConnection,
    where: ColumnElement[bool],
    limit: int,
    offset: int = 0,
    after: tuple[datetime, str] | None = None,
) -> tuple[list[Memory], int, bool]:
    """The memories matching `where`, newest first (`updated_at` descending, then `id`), one
    page past `offset` (and past the position `after`); how many match in all; whether
    more follow the page."""
    total = (
        await conn.execute(select(func.count()).select_from(memories).where(where))
    ).scalar_one()
    page = where
    if after is not None:
        updated_at, memory_id = after
        page = and_(
            where,
            or_(
                memories.c.updated_at < updated_at,
                and_(memories.c.updated_at == updated_at, memories.c.id > memory_id),
            ),
        )
    rows = (
        await conn.execute(
            select(*MEMORY_COLUMNS)
            .where(page)
            .order_by(memories.c.updated_at.desc(), memories.c.id)
            .limit(limit + 1)
            .offset(offset)
        )
    ).all()
    return [memory_from_row(r) for r in rows[:limit]], int(total), len(rows) > limit


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
