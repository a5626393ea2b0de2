"""A memory's neighbours: the memories written just before and after it by the same run.

A run writes the memories of one add (a conversation, a session's messages); in event-time
order they are the memory's context (`core.recall_signals`, the context signal). Read from
the scope the search may see, as of its `as_of`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.domain.group import GroupConfig
from mnemo.domain.search import MemoryQuery
from mnemo.store.as_of import reading_at
from mnemo.store.schema import memories
from mnemo.store.tenancy import visible_memories


async def neighbours(
    db: AsyncEngine, query: MemoryQuery, group: GroupConfig, ids: Sequence[str]
) -> dict[str, list[str]]:
    """For each of `ids`: the ids of the visible memories just before and after it among
    those its first run wrote, in event-time order (none for a memory alone in its run)."""
    if not ids:
        return {}
    run = memories.c.run_ids[1]
    where = visible_memories(query, group)
    runs = select(run).where(where, memories.c.id.in_(list(ids))).distinct().scalar_subquery()
    order = (memories.c.event_time, memories.c.id)
    ranked = (
        select(
            memories.c.id,
            func.lag(memories.c.id).over(partition_by=run, order_by=order).label("before"),
            func.lead(memories.c.id).over(partition_by=run, order_by=order).label("after"),
        )
        .where(where, run.in_(runs))
        .subquery()
    )
    stmt = select(ranked).where(ranked.c.id.in_(list(ids)))
    async with db.connect() as conn:
        rows = (await reading_at(conn, query.as_of).execute(stmt)).all()
    return {row.id: [n for n in (row.before, row.after) if n is not None] for row in rows}
