"""A memory's neighbours: the memories written just before and after it by the same run.

A run writes the memories of one add (a conversation, a session's messages); in event-time
order they are the memory's context (`core.recall_signals`, the context signal). Read from
the scope the search may see, as of its `as_of`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import String, any_, cast, select, tuple_
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql.selectable import ScalarSelect

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
    where = visible_memories(query, group)
    # One array parameter, not one per id: the statement compiles once whatever the pool's
    # size, and runs even without ids (tests/integration/engine/test_statement_cache.py).
    wanted = cast(list(ids), ARRAY(String))
    run = memories.c.run_ids[1]
    candidates = (
        select(memories.c.id, run.label("run"), memories.c.event_time)
        .where(where, memories.c.id == any_(wanted))
        .cte("candidates")
    )
    here = tuple_(candidates.c.event_time, candidates.c.id)
    at = tuple_(memories.c.event_time, memories.c.id)

    def beside(before: bool) -> ScalarSelect[str]:
        # The next visible memory of the run on one side: one step along the index on
        # (project, group, run_ids[1], event_time, id) (migration 0022), not the scope.
        side = at < here if before else at > here
        order = (
            (memories.c.event_time.desc(), memories.c.id.desc())
            if before
            else (memories.c.event_time, memories.c.id)
        )
        return (
            select(memories.c.id)
            .where(where, run == candidates.c.run, side)
            .order_by(*order)
            .limit(1)
            .scalar_subquery()
        )

    stmt = select(candidates.c.id, beside(True).label("before"), beside(False).label("after"))
    async with db.connect() as conn:
        rows = (await reading_at(conn, query.as_of).execute(stmt)).all()
    return {row.id: [n for n in (row.before, row.after) if n is not None] for row in rows}
