"""This database's installation: one id (made by migration 0020) and the Kafka topic prefix
the first gateway claimed. Stamped into every Kafka record and checked by every stage, so
that a stage pointed at another database or another topic prefix refuses to start instead
of dropping records (mnemo.kafka.installation)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store.schema import installation as table


@dataclass(frozen=True)
class Installation:
    installation_id: str
    topic_prefix: str | None  # None until a gateway claimed the database


async def read(conn: AsyncConnection) -> Installation:
    row = (await conn.execute(select(table.c.installation_id, table.c.topic_prefix))).one()
    return Installation(row.installation_id, row.topic_prefix)


async def claim(conn: AsyncConnection, topic_prefix: str) -> Installation:
    """Record `topic_prefix` as this installation's unless one is recorded already; the
    installation as it stands afterwards (its prefix may be another gateway's)."""
    await conn.execute(
        update(table).where(table.c.topic_prefix.is_(None)).values(topic_prefix=topic_prefix)
    )
    return await read(conn)
