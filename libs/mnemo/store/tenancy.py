"""Isolation lives here, in one place: every memory query goes through `visible_memories`.

- every query is filtered by project and group;
- user-scoped topics require and filter by `user_id` (hard isolation);
- property filters narrow a topic's memories (soft isolation: a search without them sees all).

The operator console browses a whole project (`project_view`): the key's project is the
boundary there, and user ids are a filter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import ColumnElement, and_, false, or_

from mnemo.domain.group import GroupConfig
from mnemo.domain.search import MemoryQuery
from mnemo.store.schema import memories


class IsolationError(ValueError):
    """A request would cross a user boundary (e.g. user-scoped topics without a user_id)."""


def tenant_filter(project: str, group: str) -> ColumnElement[bool]:
    return and_(memories.c.project == project, memories.c.group == group)


def memory_owner_filter(
    project: str, group: GroupConfig, user_id: str | None
) -> ColumnElement[bool]:
    """Memories one caller may address by id: their own, or those of non-user-scoped topics."""
    shared = [t.name for t in group.topics if not t.scoping.user_scoped]
    own = memories.c.user_id == user_id if user_id is not None else false()
    return and_(
        tenant_filter(project, group.name),
        or_(memories.c.topic.in_(shared), and_(own, memories.c.topic.notin_(shared))),
    )


def visible_memories(query: MemoryQuery, group: GroupConfig) -> ColumnElement[bool]:
    """The WHERE clause for a search or list: tenant, topics, user and property filters."""
    per_topic: list[ColumnElement[bool]] = []
    for selector in query.topics:
        topic = group.topic(selector.name)
        if topic.internal:
            continue  # fragments are never searchable
        clauses: list[ColumnElement[bool]] = [memories.c.topic == topic.name]
        if topic.scoping.user_scoped:
            if query.user_id is None:
                raise IsolationError(
                    f"topic '{topic.name}' is user-scoped: searching or listing it needs user_id"
                )
            clauses.append(memories.c.user_id == query.user_id)
        for key, value in query.filters_for(selector).items():
            clauses.append(memories.c.properties[key].astext == value)
        per_topic.append(and_(*clauses))
    if not per_topic:
        return false()
    return and_(
        tenant_filter(query.project, query.group),
        memories.c.status == "active",
        or_(*per_topic),
    )


def project_view(
    project: str,
    group: GroupConfig,
    topics: Sequence[str],
    user_id: str | None,
    properties: Mapping[str, str],
) -> ColumnElement[bool]:
    """The operator console's view of a group: active memories of `topics` across every user
    of the project (narrowed to `user_id` when given). The project is the hard boundary
    between keys and is always applied; internal topics stay invisible."""
    visible = [t for t in topics if not group.topic(t).internal]
    if not visible:
        return false()
    clauses: list[ColumnElement[bool]] = [
        tenant_filter(project, group.name),
        memories.c.status == "active",
        memories.c.topic.in_(visible),
    ]
    if user_id is not None:
        clauses.append(memories.c.user_id == user_id)
    for key, value in properties.items():
        clauses.append(memories.c.properties[key].astext == value)
    return and_(*clauses)
