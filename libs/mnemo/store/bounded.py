"""Which memory is a bounded topic's one memory in a scope (commits and extraction ask)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Select, String, and_, bindparam, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Memory, MemoryStatus
from mnemo.domain.scope import bounded_memory_id, scoped_properties, topic_scope
from mnemo.domain.topics import Topic
from mnemo.store.rows import MEMORY_COLUMNS, memory_from_row
from mnemo.store.schema import memories
from mnemo.store.tenancy import owner_filter, shared_topics


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
    statement = _existing_statement(topic.scoping.user_scoped, user_id is None)
    parameters = _parameters(project, group, topic, user_id, properties)
    row = (await conn.execute(statement, parameters)).first()
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
    statement = _current_statement(shared_topics(group), topic.scoping.user_scoped, user_id is None)
    parameters = _parameters(project, group.name, topic, user_id, properties)
    row = (await conn.execute(statement, parameters)).first()
    return memory_from_row(row) if row else None


# Extraction asks for every add: the statements are built once per shape, values bound at
# execution (building and caching them per call was most of this lookup's CPU, py-spy).
_PROJECT = bindparam("project", type_=String)
_GROUP = bindparam("group", type_=String)
_DERIVED = bindparam("derived", type_=String)
_TOPIC = bindparam("topic", type_=String)
_USER = bindparam("user_id", type_=String)
_PROPERTIES = bindparam("properties", type_=memories.c.properties.type)


def _parameters(
    project: str, group: str, topic: Topic, user_id: str | None, properties: Mapping[str, str]
) -> dict[str, Any]:
    return {
        "project": project,
        "group": group,
        "derived": _derived(project, group, topic, user_id, properties),
        "topic": topic.name,
        "user_id": user_id,
        "properties": scoped_properties(topic, properties),
    }


@functools.cache
def _existing_statement(user_scoped: bool, no_user: bool) -> Select[tuple[str]]:
    scope = [
        memories.c.topic == _TOPIC,
        memories.c.properties == _PROPERTIES,
        memories.c.status == MemoryStatus.active,
    ]
    if user_scoped:
        scope.append(memories.c.user_id.is_(None) if no_user else memories.c.user_id == _USER)
    return (
        select(memories.c.id)
        .where(memories.c.project == _PROJECT, memories.c.group == _GROUP)
        .where(or_(memories.c.id == _DERIVED, and_(*scope)))
        .order_by(
            (memories.c.status == MemoryStatus.active).desc(),
            (memories.c.id == _DERIVED).desc(),
            memories.c.updated_at.desc(),
        )
        .limit(1)
    )


@functools.lru_cache(maxsize=256)
def _current_statement(
    shared: tuple[str, ...], user_scoped: bool, no_user: bool
) -> Select[tuple[Any, ...]]:
    found = _existing_statement(user_scoped, no_user).scalar_subquery()
    return select(*MEMORY_COLUMNS).where(
        memories.c.id == func.coalesce(found, _DERIVED),
        memories.c.status == MemoryStatus.active,
        owner_filter(_PROJECT, _GROUP, shared, None if no_user else _USER),
    )


def _derived(
    project: str, group: str, topic: Topic, user_id: str | None, properties: Mapping[str, str]
) -> str:
    return bounded_memory_id(project, group, topic.name, topic_scope(topic, user_id, properties))
