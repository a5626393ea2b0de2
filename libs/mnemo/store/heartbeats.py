"""Worker heartbeats: one row per live pipeline worker process, stamped by the database.

Timestamps come from the database's clock (`now()`) on write and on read, so processes on
different hosts compare without clock skew.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store.schema import worker_heartbeats as table


@dataclass(frozen=True)
class Heartbeat:
    worker_id: str
    role: str
    host: str
    pid: int
    age_seconds: float  # since its last beat


async def beat(conn: AsyncConnection, worker_id: str, role: str, host: str, pid: int) -> None:
    """Record that `worker_id` is alive now (its first beat also records when it started)."""
    now = func.now()
    statement = pg_insert(table).values(
        worker_id=worker_id, role=role, host=host, pid=pid, started_at=now, beat_at=now
    )
    await conn.execute(
        statement.on_conflict_do_update(index_elements=[table.c.worker_id], set_={"beat_at": now})
    )


async def fresh(conn: AsyncConnection, within_seconds: float) -> list[Heartbeat]:
    """Workers whose last beat is younger than `within_seconds`, youngest first."""
    age = func.extract("epoch", func.now() - table.c.beat_at)
    rows = await conn.execute(
        select(table.c.worker_id, table.c.role, table.c.host, table.c.pid, age.label("age"))
        .where(age < within_seconds)
        .order_by(age)
    )
    return [Heartbeat(r.worker_id, r.role, r.host, r.pid, float(r.age)) for r in rows]


async def forget(conn: AsyncConnection, worker_ids: Iterable[str]) -> None:
    """Remove the rows of workers that stopped (or are known dead)."""
    ids = list(worker_ids)
    if ids:
        await conn.execute(delete(table).where(table.c.worker_id.in_(ids)))


async def prune(conn: AsyncConnection, older_than_seconds: float) -> None:
    """Remove rows of workers silent for longer than `older_than_seconds` (long dead)."""
    age = func.extract("epoch", func.now() - table.c.beat_at)
    await conn.execute(delete(table).where(age > older_than_seconds))
