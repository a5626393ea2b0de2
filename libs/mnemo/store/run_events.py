"""Postgres LISTEN/NOTIFY for finished runs, so run waits (`?wait=`) sleep until told.

Whoever moves runs to a terminal status (`store.runs`) sends their ids on CHANNEL in the
same transaction; Postgres delivers the notification at commit to every listening gateway
process, in both modes (the Kafka stages write run status to the same database).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

import psycopg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

CHANNEL = "mnemo_runs"
# A notification's payload must stay under 8000 bytes; run ids are joined by commas.
_PAYLOAD_BYTES = 7000


async def notify_finished(conn: AsyncConnection, run_ids: Iterable[str]) -> None:
    """Announce, at commit, that these runs may have reached a terminal status."""
    chunk: list[str] = []
    size = 0
    for run_id in run_ids:
        if chunk and size + len(run_id) + 1 > _PAYLOAD_BYTES:
            await _notify(conn, chunk)
            chunk, size = [], 0
        chunk.append(run_id)
        size += len(run_id) + 1
    if chunk:
        await _notify(conn, chunk)


async def _notify(conn: AsyncConnection, run_ids: list[str]) -> None:
    await conn.execute(
        text("SELECT pg_notify(:channel, :payload)"),
        {"channel": CHANNEL, "payload": ",".join(run_ids)},
    )


async def listen_finished(database_url: str) -> AsyncIterator[list[str] | None]:
    """Yield None once listening (notifications sent before that were missed), then the
    run ids of each notification. Raises psycopg.OperationalError when the connection is
    lost; the caller reconnects."""
    libpq_url = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    async with await psycopg.AsyncConnection.connect(libpq_url, autocommit=True) as conn:
        await conn.execute(f"LISTEN {CHANNEL}")
        yield None
        async for notification in conn.notifies():
            yield [run_id for run_id in notification.payload.split(",") if run_id]
