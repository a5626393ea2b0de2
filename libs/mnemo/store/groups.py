"""Group configurations per project."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete as sql_delete
from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.store.schema import (
    buffer_items,
    buffer_watermarks,
    consolidation_scopes,
    drafts,
    groups,
    memories,
    memory_recalls,
    memory_sources,
    memory_terms,
    memory_versions,
    reconsolidation_decisions,
)

# Every table keyed by (project, group) that a deleted group's data lives in.
GROUP_TABLES = (memory_terms, memory_versions, memory_sources, memory_recalls,
                reconsolidation_decisions, consolidation_scopes, buffer_items, drafts,
                buffer_watermarks, memories)  # fmt: skip


async def get(conn: AsyncConnection, project: str, name: str) -> GroupConfig | None:
    config = (
        await conn.execute(
            select(groups.c.config).where(groups.c.project == project, groups.c.name == name)
        )
    ).scalar_one_or_none()
    return GroupConfig.model_validate(config) if config is not None else None


async def get_stamped(
    conn: AsyncConnection, project: str, name: str
) -> tuple[GroupConfig, datetime] | None:
    """The stored group and when it was last stored (`updated_at`)."""
    row = (
        await conn.execute(
            select(groups.c.config, groups.c.updated_at).where(
                groups.c.project == project, groups.c.name == name
            )
        )
    ).first()
    return (GroupConfig.model_validate(row.config), row.updated_at) if row is not None else None


async def get_for_update(conn: AsyncConnection, project: str, name: str) -> GroupConfig | None:
    """The stored group, its row locked until the transaction ends (for a conditional save)."""
    config = (
        await conn.execute(
            select(groups.c.config)
            .where(groups.c.project == project, groups.c.name == name)
            .with_for_update()
        )
    ).scalar_one_or_none()
    return GroupConfig.model_validate(config) if config is not None else None


async def list_(conn: AsyncConnection, project: str) -> list[GroupConfig]:
    rows = (
        (
            await conn.execute(
                select(groups.c.config).where(groups.c.project == project).order_by(groups.c.name)
            )
        )
        .scalars()
        .all()
    )
    return [GroupConfig.model_validate(c) for c in rows]


async def put(
    conn: AsyncConnection,
    project: str,
    group: GroupConfig,
    now: datetime,
    max_groups: int | None = None,
) -> bool:
    """Create or replace; with `max_groups`, a new group beyond that many is refused (False).

    Counting takes a per-project advisory lock for the transaction, so concurrent creates
    cannot both squeeze under the limit.
    """
    if max_groups is not None:
        await conn.execute(select(func.pg_advisory_xact_lock(func.hashtextextended(project, 0))))
        names = (
            (await conn.execute(select(groups.c.name).where(groups.c.project == project)))
            .scalars()
            .all()
        )
        if group.name not in names and len(names) >= max_groups:
            return False
    config = group.model_dump(mode="json")
    await conn.execute(
        pg_insert(groups)
        .values(project=project, name=group.name, config=config, created_at=now, updated_at=now)
        .on_conflict_do_update(
            index_elements=[groups.c.project, groups.c.name],
            set_={"config": config, "updated_at": now},
        )
    )
    return True


async def create_if_absent(
    conn: AsyncConnection, project: str, group: GroupConfig, now: datetime
) -> bool:
    """Store `group` unless the project has one of that name; True if this call stored it."""
    inserted = await conn.execute(
        pg_insert(groups)
        .values(
            project=project,
            name=group.name,
            config=group.model_dump(mode="json"),
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing()
        .returning(groups.c.name)
    )
    return inserted.first() is not None


async def memory_count(conn: AsyncConnection, project: str, name: str) -> int:
    """Memories of the group, in any status."""
    statement = (
        select(func.count())
        .select_from(memories)
        .where(memories.c.project == project, memories.c.group == name)
    )
    return int((await conn.execute(statement)).scalar_one())


async def delete(conn: AsyncConnection, project: str, name: str) -> bool:
    """Remove the group, its memories and everything kept per memory or per scope of it
    (terms, versions, sources, recalls, decisions, buffers, consolidation state); runs stay,
    as the record of what happened. False when there was no such group."""
    for table in GROUP_TABLES:
        await conn.execute(
            sql_delete(table).where(table.c.project == project, table.c.group == name)
        )
    gone = await conn.execute(
        sql_delete(groups).where(groups.c.project == project, groups.c.name == name)
    )
    return bool(gone.rowcount)
