"""Applying run-status events to the `runs` table (the committer does this)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.domain.memory import RunState
from mnemo.kafka.events.status import RunStatusEvent
from mnemo.store import runs


async def apply_status(db: AsyncEngine, event: RunStatusEvent, now: datetime) -> None:
    """Write the event. Idempotent and order-safe: a finished run is never reopened by a late
    `in_buffer`, and `running` (a DLQ replay) only reopens runs that failed."""
    if event.status == RunState.completed:
        return  # written in the commit transaction itself: no round trip to the database
    async with db.begin() as tx:
        if event.status == RunState.running:
            await runs.reopen_failed(tx, event.run_ids, now)
        elif event.status in (RunState.in_buffer, RunState.failed):
            await runs.set_status(tx, event.run_ids, event.status, now, error=event.error)
