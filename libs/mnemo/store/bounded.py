"""Which memory is a bounded topic's one memory in a scope (commits and extraction ask)."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Memory, MemoryStatus
from mnemo.domain.scope import bounded_memory_id, scoped_properties, topic_scope
from mnemo.domain.topics import Topic
from mnemo.store.rows import MEMORY_COLUMNS, memory_from_row
from mnemo.store.schema import memories
from mnemo.store.tenancy import memory_owner_filter


async def bounded_id(
    conn: AsyncConnection,
    project: str,
    group: str,
    topic: Topic,
    user_id: str | None,
    properties: Mapping[str, str],
) -> str:
    """The id of a bounded topic's one memory in a scope: the id this project derives for
    the scope, unless an active memory of the scope holds another id (one imported with
    its source's id, e.g. from Engram), which writes then keep updating in place."""
    found = await existing_id(conn, project, group, topic, user_id, properties)
    return found or _derived(project, group, topic, user_id, properties)


async def existing_id(
    conn: AsyncConnection,
    project: str,
    group: str,
    topic: Topic,
    user_id: str | None,
    properties: Mapping[str, str],
) -> str | None:
    """The scope's active memory, else a memory under the derived id; None: neither."""
    row = (await conn.execute(_existing(project, group, topic, user_id, properties))).first()
    return str(row.id) if row is not None else None


async def current(
    conn: AsyncConnection,
    project: str,
    group: GroupConfig,
    topic: Topic,
    user_id: str | None,
    properties: Mapping[str, str],
) -> Memory | None:
    """The scope's one memory of the bounded `topic` if it is active and `user_id` may see
    it (`memories.get` of `bounded_id`), in one round trip."""
    derived = _derived(project, group.name, topic, user_id, properties)
    found = _existing(project, group.name, topic, user_id, properties).scalar_subquery()
    row = (
        await conn.execute(
            select(*MEMORY_COLUMNS).where(
                memories.c.id == func.coalesce(found, derived),
                memories.c.status == MemoryStatus.active,
                memory_owner_filter(project, group, user_id),
            )
        )
    ).first()
    return memory_from_row(row) if row else None


def _existing(
    project: str, group: str, topic: Topic, user_id: str | None, properties: Mapping[str, str]
) -> Select[tuple[str]]:
    derived = _derived(project, group, topic, user_id, properties)
    scope = [
        memories.c.topic == topic.name,
        memories.c.properties == scoped_properties(topic, properties),
        memories.c.status == MemoryStatus.active,
    ]
    if topic.scoping.user_scoped:
        scope.append(memories.c.user_id == user_id)
    return (
        select(memories.c.id)
        .where(memories.c.project == project, memories.c.group == group)
        .where(or_(memories.c.id == derived, and_(*scope)))
        .order_by(
            (memories.c.status == MemoryStatus.active).desc(),
            (memories.c.id == derived).desc(),
            memories.c.updated_at.desc(),
        )
        .limit(1)
    )


def _derived(
    project: str, group: str, topic: Topic, user_id: str | None, properties: Mapping[str, str]
) -> str:
    return bounded_memory_id(project, group, topic.name, topic_scope(topic, user_id, properties))
