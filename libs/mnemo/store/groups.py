"""Group configurations per project."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.store.schema import groups


async def get(conn: AsyncConnection, project: str, name: str) -> GroupConfig | None:
    config = (
        await conn.execute(
            select(groups.c.config).where(groups.c.project == project, groups.c.name == name)
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


async def put(conn: AsyncConnection, project: str, group: GroupConfig, now: datetime) -> None:
    config = group.model_dump(mode="json")
    await conn.execute(
        pg_insert(groups)
        .values(project=project, name=group.name, config=config, created_at=now, updated_at=now)
        .on_conflict_do_update(
            index_elements=[groups.c.project, groups.c.name],
            set_={"config": config, "updated_at": now},
        )
    )


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
