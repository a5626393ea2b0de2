"""The sweeps both modes run periodically (the embedded ticker, the committer): raw inputs
past their retention, and idempotency keys past their window."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo.clock import Clock
from mnemo.store import idempotency, retention


async def sweep_expired(db: AsyncEngine, clock: Clock) -> int:
    """Redact every raw input past its group's `raw_input_days`, a batch per transaction.
    Returns how many runs it redacted."""
    return await _in_batches(db, lambda tx: retention.sweep(tx, clock.now()), retention.SWEEP_BATCH)


async def forget_expired_keys(db: AsyncEngine, clock: Clock) -> int:
    """Delete every idempotency key past its window, a batch per transaction."""
    return await _in_batches(
        db, lambda tx: idempotency.sweep(tx, clock.now()), idempotency.SWEEP_BATCH
    )


async def _in_batches(
    db: AsyncEngine, sweep: Callable[[AsyncConnection], Awaitable[int]], batch: int
) -> int:
    """Run `sweep` (which handles at most `batch` rows) until it handles fewer; the total."""
    done = 0
    while True:
        async with db.begin() as tx:
            count = await sweep(tx)
        done += count
        if count < batch:
            return done
