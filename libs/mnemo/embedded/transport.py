"""The embedded transport: runs go on the Postgres bus; workers and a ticker drive them."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.core.groups import GroupCache
from mnemo.core.heartbeat import EMBEDDED_ROLE, HeartbeatWriter
from mnemo.core.records import RunRecord
from mnemo.core.transport import Backlog
from mnemo.deps import Deps
from mnemo.domain.idempotency import IdempotencyClaim
from mnemo.embedded.bus.base import FLUSH, PIPELINE_CHANNEL, RUN
from mnemo.embedded.bus.postgres import PostgresBus
from mnemo.embedded.runner import PipelineRunner
from mnemo.embedded.submitter import PostgresSubmitter
from mnemo.embedded.ticker import run_ticker
from mnemo.embedded.worker import WorkerPool
from mnemo.settings import Settings
from mnemo.store.backlog import bus_backlog


class EmbeddedTransport:
    """`RunTransport` on the embedded bus. `start` runs the pipeline in this process:
    `settings.workers` workers, the buffer ticker, the cross-process wakeup listener and
    the process's heartbeat."""

    worker_roles: tuple[str, ...] = (EMBEDDED_ROLE,)
    broker: str | None = None  # the bus is a table of the database

    def __init__(self, deps: Deps, groups: GroupCache, settings: Settings, database_url: str):
        self.settings = settings
        self.database_url = database_url
        self.bus = PostgresBus()
        self.runner = PipelineRunner(deps, self.bus, groups)
        self.submitter = PostgresSubmitter(deps.db, self.bus, max_pending=settings.max_queued_adds)
        self.workers: WorkerPool | None = None
        self.heartbeat = HeartbeatWriter(deps.db, EMBEDDED_ROLE, settings.heartbeat_seconds)
        self._stop = asyncio.Event()
        self._ticker: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._beating: asyncio.Task[None] | None = None

    async def check(self) -> str | None:
        """The embedded bus lives in the database: nothing else to reach."""
        return None

    async def submit(self, record: RunRecord, idempotency: IdempotencyClaim | None = None) -> None:
        await self.submitter.submit(record, idempotency)

    async def stage(self, claim: AsyncConnection, record: RunRecord) -> None:
        await self.submitter.enqueue(claim, record)  # commits with the claim

    async def publish(self, record: RunRecord) -> None:
        self.bus.wake()  # the record committed with the claim: nothing can fail here

    async def raw_log_position(self) -> dict[str, Any] | None:
        return None  # the bus deletes a record once it is processed: there is no raw log

    async def backlog(self) -> list[Backlog]:
        """Records on the bus not yet processed: adds (`run`) and buffer flushes (`flush`)."""
        async with self.runner.deps.db.connect() as conn:
            waiting = await bus_backlog(conn, PIPELINE_CHANNEL)
        kinds = [RUN, FLUSH, *sorted(k for k in waiting if k not in (RUN, FLUSH))]
        return [Backlog(k, *waiting.get(k, (0, 0.0))) for k in kinds]

    async def start(self) -> None:
        s = self.settings
        await self.heartbeat.beat()  # alive from the start: readiness follows at once
        self._beating = asyncio.create_task(self.heartbeat.run(), name="mnemo-heartbeat")
        self.workers = WorkerPool(
            self.runner, self.bus, s.workers, s.bus_poll_seconds, s.run_time_budget_seconds
        )
        self.workers.start()
        self._stop.clear()
        self._ticker = asyncio.create_task(
            run_ticker(self.runner, s.buffer_tick_seconds, self._stop, s.retention_sweep_seconds)
        )
        self._listener = asyncio.create_task(self.bus.listen(self.database_url))

    async def stop(self) -> None:
        self._stop.set()
        if self.workers is not None:
            await self.workers.stop()
            self.workers = None
        if self._ticker is not None:
            await self._ticker
        for task in (self._listener, self._beating):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self._beating is not None:
            await self.heartbeat.forget()
        self._ticker = self._listener = self._beating = None
