"""Erases in progress (`pending_erasures`): written with the tombstone, removed with the
clean-up, so an erase cut short (kill -9, a lost connection) is found and finished."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store.schema import erasures, pending_erasures


@dataclass(frozen=True)
class PendingErasure:
    project: str
    user_id: str
    seq: int
    runs: Mapping[str, str] | None  # None: the runs are not known (an older erase)


async def add(
    conn: AsyncConnection,
    project: str,
    user_id: str,
    seq: int,
    runs: Mapping[str, str],
    now: datetime,
) -> None:
    """Record the erase numbered `seq` as begun (in the tombstone's transaction)."""
    row = {"project": project, "user_id": user_id, "seq": seq, "runs": dict(runs)}
    statement = pg_insert(pending_erasures).values(**row, requested_at=now)
    await conn.execute(
        statement.on_conflict_do_update(
            index_elements=["project", "user_id"],
            set_={"seq": seq, "runs": statement.excluded.runs, "requested_at": now},
        )
    )


async def waiting(conn: AsyncConnection, requested_before: datetime) -> list[tuple[str, str]]:
    """(project, user id) of every erase requested before then and not completed yet."""
    found = await conn.execute(
        select(pending_erasures.c.project, pending_erasures.c.user_id).where(
            pending_erasures.c.requested_at < requested_before
        )
    )
    return [(r.project, r.user_id) for r in found]


async def claim(
    conn: AsyncConnection, project: str, user_id: str, wait: bool
) -> PendingErasure | None:
    """Lock the pending erase for this transaction; None when it is done, or (`wait`
    false) when another process is finishing it right now."""
    row = (
        await conn.execute(
            select(pending_erasures)
            .where(pending_erasures.c.project == project, pending_erasures.c.user_id == user_id)
            .with_for_update(skip_locked=not wait)
        )
    ).one_or_none()
    if row is None:
        return None
    return PendingErasure(row.project, row.user_id, int(row.seq), row.runs)


async def complete(
    conn: AsyncConnection, project: str, user_id: str, seq: int, now: datetime
) -> None:
    """Mark the erase numbered `seq` completed (in its clean-up's transaction). A renewed
    erase (a later number) stays pending."""
    await conn.execute(
        delete(pending_erasures).where(
            pending_erasures.c.project == project,
            pending_erasures.c.user_id == user_id,
            pending_erasures.c.seq == seq,
        )
    )
    await conn.execute(
        update(erasures)
        .where(erasures.c.project == project, erasures.c.seq == seq)
        .values(completed_at=now)
    )
