"""The sweeps both modes run periodically (the embedded ticker, the committer): raw inputs
past their retention, and idempotency keys past their window."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.store import idempotency, retention


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


async def forget_expired_keys(db: AsyncEngine, clock: Clock) -> int:
    """Delete every idempotency key past its window, a batch per transaction."""
    deleted = 0
    while True:
        async with db.begin() as tx:
            count = await idempotency.sweep(tx, clock.now())
        deleted += count
        if count < idempotency.SWEEP_BATCH:
            return deleted
