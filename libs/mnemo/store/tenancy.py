"""Isolation lives here, in one place: every memory query goes through `visible_memories`.

- every query is filtered by project and group;
- user-scoped topics require and filter by `user_id` (hard isolation);
- a property filter narrows only the topics scoped by that property (soft isolation: a
  search without it sees every value, and a topic not scoped by a key ignores it). Engram's
  search and list `properties` "narrow results for topics scoped by passed properties";
- a per-topic filter (`topics[i].properties`) may name only keys the topic is scoped by;
  `null`, which clears an inherited filter, is accepted for any key.

The operator console browses a whole project (`project_view`): the key's project is the
boundary there, and user ids are a filter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import (
    ARRAY,
    BindParameter,
    ColumnElement,
    String,
    and_,
    any_,
    bindparam,
    exists,
    false,
    func,
    or_,
    select,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import MemoryStatus
from mnemo.domain.requests import FieldError
from mnemo.domain.scope import scoped_properties
from mnemo.domain.search import MemoryQuery, TopicSelector
from mnemo.domain.topics import Topic
from mnemo.errors import MnemoError
from mnemo.store.expiry import live_at
from mnemo.store.schema import memories, runs


class IsolationError(MnemoError, ValueError):
    """A query the isolation rules refuse, with the request location of each problem (e.g.
    user-scoped topics without a user_id, a filter on a key a topic is not scoped by)."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(error.message for error in errors))
        self.errors = errors


# A value, or a parameter bound at execution (statements built once, `store.bounded`).
Bound = str | BindParameter[str]


def tenant_filter(project: Bound, group: Bound) -> ColumnElement[bool]:
    return and_(memories.c.project == project, memories.c.group == group)


def memory_owner_filter(
    project: str, group: GroupConfig, user_id: str | None
) -> ColumnElement[bool]:
    """Memories one caller may address by id: their own, or those of non-user-scoped topics."""
    return owner_filter(project, group.name, shared_topics(group), user_id)


def shared_topics(group: GroupConfig) -> tuple[str, ...]:
    """The group's topics that are not user-scoped."""
    return tuple(t.name for t in group.topics if not t.scoping.user_scoped)


def owner_filter(
    project: Bound, group: Bound, shared: Sequence[str], user_id: Bound | None
) -> ColumnElement[bool]:
    """`memory_owner_filter` over the group's `shared_topics`."""
    own = memories.c.user_id == user_id if user_id is not None else false()
    return and_(
        tenant_filter(project, group),
        or_(memories.c.topic.in_(shared), and_(own, memories.c.topic.notin_(shared))),
    )


def topic_filters(query: MemoryQuery, selector: TopicSelector, topic: Topic) -> dict[str, str]:
    """The property filters that apply to one topic: the request's `properties` with the
    selector's overrides on top (`None` clears), kept to the keys the topic is scoped by."""
    merged: dict[str, str | None] = {**query.properties, **(selector.properties or {})}
    return {
        key: value
        for key, value in merged.items()
        if value is not None and key in topic.scoping.scope_properties
    }


def _selector_problems(index: int, selector: TopicSelector, topic: Topic) -> list[FieldError]:
    return [
        FieldError(
            location=f"body.topics[{index}].properties.{key}",
            value=value,
            message=f"topic '{topic.name}' is not scoped by '{key}', so it cannot be filtered "
            "by it (send null to clear an inherited filter)",
        )
        for key, value in (selector.properties or {}).items()
        if value is not None and key not in topic.scoping.scope_properties
    ]


def visible_memories(query: MemoryQuery, group: GroupConfig) -> ColumnElement[bool]:
    """The WHERE clause for a search or list: tenant, topics, user and property filters.

    The selectors are bound as array parameters (topic names, and one `{topic: filters}`
    JSONB pattern per selector), so the statement's shape never depends on the list: a
    new selector list reuses the compiled statement instead of compiling (and caching) a
    clause per selector. Only six shapes exist: user clause none / own / mixed, with or
    without property filters.
    """
    shared: set[str] = set()
    own: set[str] = set()
    patterns: list[dict[str, dict[str, str]]] = []
    problems: list[FieldError] = []
    needs_user: list[str] = []
    for index, selector in enumerate(query.topics):
        topic = group.topic(selector.name)
        problems += _selector_problems(index, selector, topic)
        if topic.internal:
            continue  # fragments are never searchable
        if topic.scoping.user_scoped:
            if query.user_id is None:
                needs_user.append(topic.name)
            own.add(topic.name)
        else:
            shared.add(topic.name)
        patterns.append({topic.name: topic_filters(query, selector, topic)})
    if needs_user:
        names = ", ".join(f"'{name}'" for name in needs_user)
        message = f"user-scoped topics ({names}): searching or listing them needs user_id"
        problems.insert(0, FieldError(location="body.user_id", message=message))
    if problems:
        raise IsolationError(problems)
    if not patterns:
        return false()
    status = (
        memories.c.status.in_([MemoryStatus.active, MemoryStatus.consolidated])
        if query.include_consolidated
        else memories.c.status == MemoryStatus.active
    )
    clauses = [
        tenant_filter(query.project, query.group),
        status,
        memories.c.topic == any_(_array(sorted(shared | own), String)),
    ]
    if own:  # user-scoped topics: only the caller's memories (hard isolation)
        mine = memories.c.user_id == query.user_id
        if shared:
            mine = or_(memories.c.topic == any_(_array(sorted(shared), String)), mine)
        clauses.append(mine)
    if any(filters for pattern in patterns for filters in pattern.values()):
        # Each memory as {topic: properties}: it matches a selector when that contains the
        # selector's pattern (same topic, and every filtered property equal).
        keyed = func.jsonb_build_object(memories.c.topic, memories.c.properties)
        clauses.append(keyed.op("@>")(any_(_array(patterns, JSONB))))
    live = live_at(group, sorted(shared | own), query.as_of)
    if live is not None:  # only groups with expiring topics get this clause
        clauses.append(live)
    return and_(*clauses)


def _array(values: list[Any], item_type: Any) -> BindParameter[Any]:
    """One array bind parameter: its length is a value, not part of the statement."""
    return bindparam(None, values, type_=ARRAY(item_type), unique=True)


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
    ]
    if user_id is not None:
        clauses.append(memories.c.user_id == user_id)
    # As in search and list, a property narrows only the topics scoped by it.
    per_topic = [
        and_(
            memories.c.topic == name,
            *(
                memories.c.properties[key].astext == value
                for key, value in scoped_properties(group.topic(name), properties).items()
            ),
        )
        for name in visible
    ]
    return and_(*clauses, or_(*per_topic))


async def user_known(conn: AsyncConnection, project: str, user_id: str) -> bool:
    """Whether the project has seen `user_id` (compared form): a run of theirs that still
    names them, or a memory of theirs in any group and status (imports write memories
    without runs). An erased user is unknown again: erasure removes both."""
    ran = select(runs.c.run_id).where(runs.c.project == project, runs.c.user_id == user_id)
    kept = select(memories.c.id).where(memories.c.project == project, memories.c.user_id == user_id)
    found = await conn.execute(select(or_(exists(ran), exists(kept))))
    return bool(found.scalar())
