"""Reading and administering committed memories. Writes of pipelines go through commits."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Memory, MemoryStatus, MemoryVersion
from mnemo.domain.search import MemoryQuery
from mnemo.store.commits import _keep_version
from mnemo.store.forget import forget_memories, forget_user
from mnemo.store.rows import MEMORY_COLUMNS, memory_from_row
from mnemo.store.schema import drafts, memories, memory_versions
from mnemo.store.tenancy import memory_owner_filter, visible_memories


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
    conn: AsyncConnection, query: MemoryQuery, group: GroupConfig
) -> tuple[list[Memory], int]:
    return await newest_page(conn, visible_memories(query, group), query.limit)


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
    await _keep_version(conn, row._mapping, "deleted", None, now)  # type: ignore[arg-type]
    await conn.execute(
        update(memories)
        .where(memories.c.id == memory_id)
        .values(status=MemoryStatus.archived, version=row.version + 1, updated_at=now)
    )
    return True


async def erase(
    conn: AsyncConnection, project: str, group: GroupConfig, user_id: str | None, memory_id: str
) -> bool:
    """Erase for real (GDPR): the memory, all its versions and any draft naming it."""
    found = (
        await conn.execute(
            delete(memories)
            .where(memories.c.id == memory_id, memory_owner_filter(project, group, user_id))
            .returning(memories.c.id)
        )
    ).first()
    if found is None:
        return False
    await conn.execute(delete(memory_versions).where(memory_versions.c.memory_id == memory_id))
    await conn.execute(delete(drafts).where(drafts.c.candidate["memory_id"].astext == memory_id))
    await forget_memories(conn, [memory_id])
    return True


async def erase_user(conn: AsyncConnection, project: str, user_id: str) -> int:
    """Erase every memory, version and draft of one user in a project."""
    ids = (
        (
            await conn.execute(
                delete(memories)
                .where(memories.c.project == project, memories.c.user_id == user_id)
                .returning(memories.c.id)
            )
        )
        .scalars()
        .all()
    )
    if ids:
        await conn.execute(delete(memory_versions).where(memory_versions.c.memory_id.in_(ids)))
    owned = drafts.c.candidate["user_id"].astext == user_id
    if ids:
        owned = or_(owned, drafts.c.candidate["memory_id"].astext.in_(ids))
    await conn.execute(delete(drafts).where(drafts.c.project == project, owned))
    await forget_memories(conn, ids)
    await forget_user(conn, project, user_id)
    return len(ids)


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
            select(memory_versions)
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
        )
        for r in rows
    ]
