"""The embedded bus: a Postgres table, row locks and per-key ordering.

A consumer claims the head record of a key with FOR UPDATE SKIP LOCKED inside its own
transaction and deletes it in that same transaction together with the record's effects,
so a kill -9 at any moment either leaves everything or applies everything.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, insert, text
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.bus.base import Record
from mnemo.store.schema import bus_records

_CLAIM = text("""
    SELECT r.id, r.topic, r.key, r.payload FROM bus_records r
    WHERE r.topic = ANY(:topics)
      AND NOT EXISTS (SELECT 1 FROM bus_records e WHERE e.key = r.key AND e.id < r.id)
    ORDER BY r.id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
""")


class PostgresBus:
    def __init__(self) -> None:
        # Wakes local consumers right after a publish instead of waiting for their next poll.
        self.published = asyncio.Event()

    async def publish(
        self, tx: AsyncConnection, topic: str, key: str, payload: dict[str, Any]
    ) -> None:
        await tx.execute(
            insert(bus_records).values(
                topic=topic, key=key, payload=payload, created_at=datetime.now(UTC)
            )
        )
        self.published.set()

    async def claim(self, tx: AsyncConnection, topics: tuple[str, ...]) -> Record | None:
        row = (await tx.execute(_CLAIM, {"topics": list(topics)})).first()
        if row is None:
            return None
        return Record(id=row.id, topic=row.topic, key=row.key, payload=row.payload)

    async def ack(self, tx: AsyncConnection, record: Record) -> None:
        await tx.execute(delete(bus_records).where(bus_records.c.id == record.id))

    async def wait(self, timeout: float) -> None:
        """Sleep until something is published locally, or `timeout` passes."""
        try:
            await asyncio.wait_for(self.published.wait(), timeout)
        except TimeoutError:
            pass
        self.published.clear()
