"""Mapping database rows to domain models."""

from __future__ import annotations

from typing import Any

from mnemo.domain.memory import Memory, MemoryStatus
from mnemo.store.schema import memories

MEMORY_COLUMNS = (
    memories.c.id,
    memories.c.project,
    memories.c.group,
    memories.c.topic,
    memories.c.user_id,
    memories.c.properties,
    memories.c.content,
    memories.c.created_at,
    memories.c.updated_at,
    memories.c.event_time,
    memories.c.event_time_end,
    memories.c.status,
)


def memory_from_row(row: Any, score: float | None = None) -> Memory:
    """`row` is a SQLAlchemy Row holding MEMORY_COLUMNS."""
    m = row._mapping
    return Memory(
        id=m["id"],
        project_id=m["project"],
        content=m["content"],
        topic=m["topic"],
        group=m["group"],
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        user_id=m["user_id"],
        properties=m["properties"] or None,
        score=score,
        event_time=m["event_time"],
        event_time_end=m["event_time_end"],
        # Only a memory that is not active says its status (Engram's shape stays as it was).
        status=None if m["status"] == MemoryStatus.active else MemoryStatus(m["status"]),
    )
