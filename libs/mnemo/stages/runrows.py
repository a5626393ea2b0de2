"""Run-row writes the distributed mode needs beyond `mnemo.store.runs`.

Candidates for `mnemo.store.runs` (see the issue-4 report): an idempotent insert for runs
that outside producers started, and a reopen that only touches failed runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.memory import RunState
from mnemo.store.schema import runs


async def ensure(conn: AsyncConnection, row: Mapping[str, Any]) -> bool:
    """Insert the run row unless it exists. Returns whether it was inserted."""
    result = await conn.execute(
        pg_insert(runs).values(**row).on_conflict_do_nothing().returning(runs.c.run_id)
    )
    return result.first() is not None


async def reopen_failed(conn: AsyncConnection, run_ids: Iterable[str], now: datetime) -> None:
    """Move failed runs back to running (a DLQ replay); other runs keep their status."""
    await conn.execute(
        update(runs)
        .where(runs.c.run_id.in_(list(run_ids)), runs.c.status == RunState.failed.value)
        .values(status=RunState.running.value, error=None, updated_at=now)
    )
