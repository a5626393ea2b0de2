"""A worker process's heartbeat: the row /readyz reads to tell a live pipeline from a dead one.

Embedded worker processes (role `embedded`) and the Kafka stage services (role: the service)
write one row each, every MNEMO_HEARTBEAT_SECONDS. A process that stops cleanly removes its
row; one that dies leaves a row that goes stale after MNEMO_HEARTBEAT_TIMEOUT_SECONDS. The
heartbeat shares the worker's event loop, so a loop blocked by CPU work also goes stale.

Worker processes of `mnemo serve` also show their supervisor a sign of life that needs no
database (the mtime of their ready file), refreshed only while their pipeline makes progress
(`making_progress`); the supervisor replaces one silent for MNEMO_WORKER_STALL_SECONDS
(`is_hung`), e.g. after SIGSTOP, and /readyz names it meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.core.failures import describe
from mnemo.store import heartbeats

log = logging.getLogger(__name__)

EMBEDDED_ROLE = "embedded"
# Rows silent for this long belong to processes long gone: a starting worker removes them.
PRUNE_AFTER_SECONDS = 24 * 3600.0


def making_progress(busy_seconds: float, budget_seconds: float, stall_seconds: float) -> bool:
    """Whether a worker whose longest-running record has held it `busy_seconds` still makes
    progress: a record's time budget ends it, so one held past the budget and the stall
    allowance is stuck where the budget cannot reach (a blocked call, a lost lock)."""
    return busy_seconds <= budget_seconds + stall_seconds


def is_hung(silent_seconds: float, stall_seconds: float) -> bool:
    """Whether a worker process whose sign of life is `silent_seconds` old is hung (its
    event loop stopped or blocked, or `making_progress` said no): replace it."""
    return silent_seconds > stall_seconds


def worker_id(role: str, host: str, pid: int) -> str:
    """The heartbeat row's key for the process `pid` on `host` in `role`."""
    return f"{role}@{host}:{pid}"


class HeartbeatWriter:
    def __init__(self, db: AsyncEngine, role: str, every_seconds: float) -> None:
        self.db = db
        self.role = role
        self.every_seconds = every_seconds
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.worker_id = worker_id(role, self.host, self.pid)
        self._pruned = False

    async def beat(self) -> None:
        """Write one heartbeat now (raises if the database is unreachable)."""
        async with self.db.begin() as conn:
            if not self._pruned:
                await heartbeats.prune(conn, PRUNE_AFTER_SECONDS)
                self._pruned = True
            await heartbeats.beat(conn, self.worker_id, self.role, self.host, self.pid)

    async def run(self) -> None:
        """Beat every `every_seconds` until cancelled; an outage only delays the next beat."""
        while True:
            try:
                await self.beat()
            except Exception as exc:
                log.warning("heartbeat not written (%s)", describe(exc, 300))
            await asyncio.sleep(self.every_seconds)

    async def forget(self) -> None:
        """Remove this process's row (a clean stop); best effort."""
        try:
            async with self.db.begin() as conn:
                await heartbeats.forget(conn, [self.worker_id])
        except Exception as exc:
            log.warning("heartbeat row not removed (%s)", describe(exc, 300))
