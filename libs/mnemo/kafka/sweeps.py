"""Sweeps of the stage services: tables on ticks (after an erase, or every while), and
the retention timer (which also finishes erases cut short).

The buffer and window tables can only be changed inside their partition's stream, so they
are swept on the pipeline's ticks. A sweep reads Postgres, so a partition is swept only when
the newest tombstone changed since its last sweep (an erase happened) or `interval` seconds
passed (retention may have expired raw inputs meanwhile).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

import faust
from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.core import retention_sweep
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.timers import guarded, transient_waits
from mnemo.store import tombstones

log = logging.getLogger(__name__)


class SweepSchedule:
    """`interval_seconds`: the longest time between sweeps of a partition. At most one
    look at the tombstones per partition every `check_seconds` (a backlog of ticks, e.g.
    after a restart, costs no queries)."""

    def __init__(self, interval_seconds: float, check_seconds: float = 1.0) -> None:
        self.interval = interval_seconds
        self.check = check_seconds
        self._swept: dict[int, tuple[int, float]] = {}  # partition -> (tombstone seq, when)
        self._checked: dict[int, float] = {}

    async def run(
        self, db: AsyncEngine, partition: int, sweep: Callable[[], Awaitable[object]]
    ) -> bool:
        """Run `sweep` for the partition if one is due; returns whether it ran."""
        now = time.monotonic()
        if now - self._checked.get(partition, float("-inf")) < self.check:
            return False
        self._checked[partition] = now
        async with db.connect() as conn:
            latest = await tombstones.latest(conn)
        swept = self._swept.get(partition)
        if swept is not None and swept[0] == latest and now - swept[1] < self.interval:
            return False
        await sweep()
        self._swept[partition] = (latest, now)
        return True


def sweep_retention_periodically(app: faust.App, rt: Runtime) -> None:
    """A timer that redacts raw inputs past their group's retention, drops expired
    idempotency keys and finishes erases cut short (Postgres only, so any one service can
    run it; the committer does), once at start and then every `retention_sweep_seconds`.
    Every instance sweeping is harmless."""

    async def sweep() -> None:
        try:
            deps = await rt.deps()
            await retention_sweep.sweep_retention(deps.db, deps.clock)
        except Exception as exc:  # the next sweep catches up
            log.warning("%s: retention sweep failed (%s)", rt.service, exc)

    @app.task
    @guarded(f"{rt.service}: retention sweep at start", *transient_waits(rt.settings))
    async def sweep_at_start() -> None:
        await sweep()

    @app.timer(rt.settings.retention_sweep_seconds)
    @guarded(f"{rt.service}: retention timer", *transient_waits(rt.settings))
    async def sweep_retention() -> None:
        await sweep()
