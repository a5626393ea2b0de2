"""Leaving a stage that cannot go on, so that its supervisor restarts it (`leave`); and the
first reason to: a table recovery that has stalled (`watch_recovery`).

After some rebalances faust-streaming's recovery waits forever for changelog records that
its consumer never fetches ("No event received for active tp ... since recovery start";
faust-streaming issues #21 and #74 describe the family). The worker then holds its
partitions and processes nothing: every run of their scope keys waits. A fresh process
recovers the same changelogs at once, and nothing is lost by leaving: offsets are committed
only below finished records and table state lives in the changelogs. So a recovery that
makes no progress for `MNEMO_KAFKA_RECOVERY_STALL_SECONDS` ends the process, as a crash
would, and compose (`restart: unless-stopped`) or `make run-distributed` starts it again.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import NoReturn, cast

import faust
from faust.tables.manager import TableManager

log = logging.getLogger(__name__)
CHECK_SECONDS = 2.0
RESTART_EXIT_CODE = 75  # EX_TEMPFAIL: try again


@dataclass
class RecoveryStall:
    """Tracks a recovery's progress. `observe` is fed its state (`in_recovery` and the
    changelog records still to read) with a monotonic time; it answers whether recovery
    has been under way with no progress for `limit_seconds`."""

    limit_seconds: float
    _since: float | None = None
    _remaining: int | None = None

    def observe(self, in_recovery: bool, remaining: int, now: float) -> bool:
        if not in_recovery:
            self._since = self._remaining = None
            return False
        if self._since is None or remaining != self._remaining:
            self._since, self._remaining = now, remaining
            return False
        return now - self._since >= self.limit_seconds


async def watch_recovery(app: faust.App, service: str, limit_seconds: float) -> None:
    """Poll the app's recovery; exit the process when it has stalled (see the module)."""
    stall = RecoveryStall(limit_seconds)
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(CHECK_SECONDS)
        recovery = cast(TableManager, app.tables).recovery
        remaining = recovery.active_remaining_total() if recovery.in_recovery else 0
        if stall.observe(recovery.in_recovery, remaining, loop.time()):
            leave(
                f"{service}: table recovery read nothing for {limit_seconds:.0f} s "
                f"({remaining} changelog records left)"
            )


def leave(reason: str) -> NoReturn:
    """End the stage at once for its supervisor to start it again. Nothing is lost: offsets
    are committed only below finished records, and table state lives in the changelogs."""
    message = f"{reason}; exiting so that the supervisor restarts this stage"
    log.error("%s", message)
    logging.shutdown()
    # Also straight to stderr: faust's log handlers may buffer, and os._exit flushes nothing.
    os.write(2, f"[mnemo] {message}\n".encode())
    # Not sys.exit: a stalled faust worker may never finish stopping.
    os._exit(RESTART_EXIT_CODE)
