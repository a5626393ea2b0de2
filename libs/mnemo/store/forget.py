"""What an erase (GDPR) removes from the memory-over-time tables.

- memories erased: their consolidation links, their recalls and the gate's decisions about
  them go; a rule erased releases its consolidated sources (they become active again, as
  no rule holds them any more);
- a user erased: every recall they made, every gate decision on their adds (which quote
  their input) and their consolidation scopes' state go too.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.memory import MemoryStatus
from mnemo.store.schema import (
    consolidation_scopes,
    memories,
    memory_recalls,
    memory_sources,
    reconsolidation_decisions,
)


async def forget_memories(conn: AsyncConnection, memory_ids: Sequence[str]) -> None:
    ids = list(memory_ids)
    if not ids:
        return
    released = select(memory_sources.c.source_id).where(memory_sources.c.rule_id.in_(ids))
    await conn.execute(
        update(memories)
        .where(memories.c.id.in_(released), memories.c.status == MemoryStatus.consolidated)
        .values(status=MemoryStatus.active)
    )
    await conn.execute(
        delete(memory_sources).where(
            or_(memory_sources.c.source_id.in_(ids), memory_sources.c.rule_id.in_(ids))
        )
    )
    await conn.execute(delete(memory_recalls).where(memory_recalls.c.memory_id.in_(ids)))
    await conn.execute(
        delete(reconsolidation_decisions).where(reconsolidation_decisions.c.memory_id.in_(ids))
    )


async def forget_user(conn: AsyncConnection, project: str, user_id: str) -> None:
    for table in (memory_recalls, reconsolidation_decisions, consolidation_scopes):
        await conn.execute(
            delete(table).where(table.c.project == project, table.c.user_id == user_id)
        )
