"""The retention sweep both modes run periodically (the embedded ticker, the committer)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.store import retention


async def sweep_expired(db: AsyncEngine, clock: Clock) -> int:
    """Redact every raw input past its group's `raw_input_days`, a batch per transaction.
    Returns how many runs it redacted."""
    redacted = 0
    while True:
        async with db.begin() as tx:
            count = await retention.sweep(tx, clock.now())
        redacted += count
        if count < retention.SWEEP_BATCH:
            return redacted
