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
NOTIFY = text("SELECT pg_notify(:channel, :payload)")


async def notify_finished(conn: AsyncConnection, run_ids: Iterable[str]) -> None:
    """Announce, at commit, that these runs may have reached a terminal status."""
    for payload in payloads(run_ids):
        await conn.execute(NOTIFY, {"channel": CHANNEL, "payload": payload})


def payloads(run_ids: Iterable[str]) -> list[str]:
    """The notification payloads announcing `run_ids` (comma-joined, each under the limit);
    a statement that finishes runs may send them itself (`pg_notify(:channel, :payload)`)."""
    out: list[str] = []
    chunk: list[str] = []
    size = 0
    for run_id in run_ids:
        if chunk and size + len(run_id) + 1 > _PAYLOAD_BYTES:
            out.append(",".join(chunk))
            chunk, size = [], 0
        chunk.append(run_id)
        size += len(run_id) + 1
    if chunk:
        out.append(",".join(chunk))
    return out


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
