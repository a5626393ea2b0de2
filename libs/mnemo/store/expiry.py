"""Expiry of memories (issue 32): a topic's `ttl_days` and `expire_unrecalled_days`.

A memory of such a topic is expired, at a time `at`, when
- `ttl_days` is set and its last update is more than that many days before `at`; or
- `expire_unrecalled_days` is set and its last recall (the recall log, `memory_recalls`),
  or its last update when it was never recalled since, is more than that many days before.
Expired memories are filtered out of search and list (`tenancy.visible_memories` adds
`live_at`); nothing is deleted, so history and provenance keep them until raw-input retention
removes them, and the console marks them (`expired_ids`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, literal, not_, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.store.schema import memories, memory_recalls


def _days(days: float) -> ColumnElement[datetime]:
    return func.make_interval(0, 0, 0, 0, 0, 0, literal(days * 86400.0))


def expired_clause(
    group: GroupConfig, topics: Sequence[str], at: datetime | None
) -> ColumnElement[bool] | None:
    """True for an expired memory of one of `topics`, as of `at` (None: the database's now);
    None when none of them expires."""
    now: ColumnElement[datetime] = literal(at) if at is not None else func.now()
    per_topic = []
    for name in topics:
        topic = group.topic(name)
        if not topic.expires:
            continue
        reasons = []
        if topic.ttl_days is not None:
            reasons.append(memories.c.updated_at < now - _days(topic.ttl_days))
        if topic.expire_unrecalled_days is not None:
            last_recall = (
                select(func.max(memory_recalls.c.recalled_at))
                .where(memory_recalls.c.memory_id == memories.c.id)
                .scalar_subquery()
            )
            last_use = func.greatest(memories.c.updated_at, last_recall)
            reasons.append(last_use < now - _days(topic.expire_unrecalled_days))
        per_topic.append(and_(memories.c.topic == name, or_(*reasons)))
    return or_(*per_topic) if per_topic else None


def live_at(
    group: GroupConfig, topics: Sequence[str], at: datetime | None
) -> ColumnElement[bool] | None:
    """The negation of `expired_clause` (None: nothing to filter)."""
    expired = expired_clause(group, topics, at)
    return None if expired is None else not_(expired)


async def expired_ids(conn: AsyncConnection, group: GroupConfig, ids: Sequence[str]) -> set[str]:
    """Which of `ids` (memories of `group`) are expired now."""
    if not ids:
        return set()
    expired = expired_clause(group, [t.name for t in group.topics], None)
    if expired is None:
        return set()
    rows = await conn.execute(select(memories.c.id).where(memories.c.id.in_(list(ids)), expired))
    return {row.id for row in rows}
