"""Which memory is a bounded topic's one memory in a scope (commits and extraction ask)."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.memory import MemoryStatus
from mnemo.domain.scope import bounded_memory_id, scoped_properties, topic_scope
from mnemo.domain.topics import Topic
from mnemo.store.schema import memories


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
    derived = _derived(project, group, topic, user_id, properties)
    scope = [
        memories.c.topic == topic.name,
        memories.c.properties == scoped_properties(topic, properties),
        memories.c.status == MemoryStatus.active,
    ]
    if topic.scoping.user_scoped:
        scope.append(memories.c.user_id == user_id)
    found = await conn.execute(
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
    row = found.first()
    return str(row.id) if row is not None else None


def _derived(
    project: str, group: str, topic: Topic, user_id: str | None, properties: Mapping[str, str]
) -> str:
    return bounded_memory_id(project, group, topic.name, topic_scope(topic, user_id, properties))
