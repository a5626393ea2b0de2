"""The embedded bus's backlog: records not yet acknowledged, per record kind."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store.schema import bus_records


async def bus_backlog(conn: AsyncConnection, channel: str) -> dict[str, tuple[int, float]]:
    """kind -> (records waiting on `channel`, age in seconds of the oldest one), by the
    database's clock. Kinds with nothing waiting are absent."""
    kind = bus_records.c.payload["kind"].astext
    age = func.extract("epoch", func.now() - func.min(bus_records.c.created_at))
    rows = await conn.execute(
        select(kind.label("kind"), func.count().label("records"), age.label("age"))
        .where(bus_records.c.channel == channel)
        .group_by(kind)
    )
    return {str(r.kind): (int(r.records), max(0.0, float(r.age))) for r in rows}
