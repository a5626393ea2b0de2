"""The embedded bus: a Postgres table, row locks and per-key ordering.

A consumer claims the head record of a key with FOR UPDATE SKIP LOCKED inside its own
transaction and deletes it in that same transaction together with the record's effects,
so a kill -9 at any moment either leaves everything or applies everything.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

import psycopg
from sqlalchemy import bindparam, delete, insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.embedded.bus.base import Record
from mnemo.embedded.bus.wakeup import Wakeup
from mnemo.store.schema import bus_records

log = logging.getLogger(__name__)

_CLAIM = text("""
    SELECT r.id, r.channel, r.scope_key, r.payload FROM bus_records r
    WHERE r.channel = ANY(:channels)
      AND NOT EXISTS (
        SELECT 1 FROM bus_records e WHERE e.scope_key = r.scope_key AND e.id < r.id
      )
    ORDER BY r.id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
""")


_ACK = delete(bus_records).where(bus_records.c.id == bindparam("id"))  # built once
# Executed with a list of rows: compiled once whatever their number (a multi-row VALUES was
# compiled anew for every batch size, a fifth of the server's CPU at 500 adds/s), and sent
# in one round trip in row order, so ids ascend in list order.
_PUBLISH = insert(bus_records)

NOTIFY_CHANNEL = "mnemo_bus"  # Postgres LISTEN/NOTIFY


class PostgresBus:
    def __init__(self) -> None:
        # Idle local consumers park here. Publishing does not wake them (the records are not
        # visible before the publisher commits): whoever commits calls `wake`.
        self.wakeup = Wakeup()

    async def publish(
        self, tx: AsyncConnection, channel: str, scope_key: str, payload: dict[str, Any]
    ) -> None:
        await self.publish_many(tx, channel, [(scope_key, payload)])

    async def publish_many(
        self, tx: AsyncConnection, channel: str, records: list[tuple[str, dict[str, Any]]]
    ) -> None:
        """Append (scope key, payload) records in list order: a scope's later record comes
        later."""
        if not records:
            return
        now = datetime.now(UTC)
        await tx.execute(
            _PUBLISH,
            [
                {"channel": channel, "scope_key": k, "payload": p, "created_at": now}
                for k, p in records
            ],
        )
        # Delivered at commit to every listening process (Postgres folds duplicates).
        await tx.execute(text(f"NOTIFY {NOTIFY_CHANNEL}"))

    async def listen(self, database_url: str) -> None:
        """Wake consumers on publishes from other processes (worker processes, gateways).

        Runs until cancelled; polling still covers a lost connection."""
        while True:
            try:
                libpq_url = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
                async with await psycopg.AsyncConnection.connect(
                    libpq_url, autocommit=True
                ) as conn:
                    await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    async for _ in conn.notifies():
                        self.wakeup.wake()  # one worker; its success wakes the next
            except psycopg.OperationalError as exc:
                log.warning("bus listener lost its connection (%s); reconnecting", exc)
                await asyncio.sleep(1.0)

    async def claim(self, tx: AsyncConnection, channels: tuple[str, ...]) -> Record | None:
        row = (await tx.execute(_CLAIM, {"channels": list(channels)})).first()
        if row is None:
            return None
        return Record(id=row.id, channel=row.channel, scope_key=row.scope_key, payload=row.payload)

    async def claim_id(self, tx: AsyncConnection, record_id: int) -> bool:
        """Claim the record `record_id` itself; False when it is gone or claimed."""
        row = await tx.execute(
            select(bus_records.c.id)
            .where(bus_records.c.id == record_id)
            .with_for_update(skip_locked=True)
        )
        return row.first() is not None

    def wake(self, count: int = 1) -> None:
        self.wakeup.wake(count)

    async def ack(self, tx: AsyncConnection, record: Record) -> None:
        await tx.execute(_ACK, {"id": record.id})
