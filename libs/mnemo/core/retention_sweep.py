"""The retention sweep, the same in both modes (the embedded ticker runs it, the committer
service in the distributed mode): once at start, then every `retention_sweep_seconds`."""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.core.erasure import finish_pending_erasures
from mnemo.core.retention import forget_expired_keys, sweep_expired

log = logging.getLogger(__name__)


async def sweep_retention(db: AsyncEngine, clock: Clock) -> None:
    """Redact raw inputs past their group's retention, drop expired idempotency keys and
    finish erases cut short. Every instance sweeping at once is harmless."""
    if redacted := await sweep_expired(db, clock):
        log.info("retention: redacted the raw input of %d run(s)", redacted)
    await forget_expired_keys(db, clock)
    await finish_pending_erasures(db, clock)
