"""Withdrawing erased users' runs wherever a transport meets them (a run about to start,
a buffer's held items, a batch between stages): the one policy both transports apply.

An erase writes a tombstone and redacts what it can reach; a run admitted before the
erase but still in flight (queued, buffered, or held by another transaction) is redacted
by the first step that meets its tombstone, and nothing of it goes on.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store import erasure, tombstones


async def withdraw_erased(
    conn: AsyncConnection, run_ids: Collection[str], now: datetime
) -> set[str]:
    """The runs among `run_ids` whose user was erased, now redacted (those still open end
    failed); the caller drops them. Empty when none was erased."""
    erased = await tombstones.erased_among(conn, run_ids)
    await erasure.redact_erased_runs(conn, erased, now)
    return erased


async def withdraw_batch(conn: AsyncConnection, run_ids: Collection[str], now: datetime) -> bool:
    """A batch of runs that travels as one record: when some of them were erased, those are
    redacted, the batch's other open runs fail with a note that a retry re-drives them, and
    the caller drops the record (True)."""
    erased = await tombstones.erased_among(conn, run_ids)
    if erased:
        await erasure.withdraw(conn, erased, [r for r in run_ids if r not in erased], now)
    return bool(erased)
