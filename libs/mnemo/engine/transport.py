"""The embedded transport: runs go on the Postgres bus; workers and a ticker drive them."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.bus.postgres import PostgresBus
from mnemo.core.groups import GroupCache
from mnemo.core.records import RunRecord
from mnemo.engine.runner import PipelineRunner
from mnemo.engine.submitter import PostgresSubmitter
from mnemo.engine.ticker import run_ticker
from mnemo.engine.worker import WorkerPool
from mnemo.settings import Settings
from mnemo.steps.base import Deps


class EmbeddedTransport:
    """`RunTransport` on the embedded bus. `start` runs the pipeline in this process:
    `settings.workers` workers, the buffer ticker and the cross-process wakeup listener."""

    def __init__(self, deps: Deps, groups: GroupCache, settings: Settings, database_url: str):
        self.settings = settings
        self.database_url = database_url
        self.bus = PostgresBus()
        self.runner = PipelineRunner(deps, self.bus, groups)
        self.submitter = PostgresSubmitter(deps.db, self.bus)
        self.workers: WorkerPool | None = None
        self._stop = asyncio.Event()
        self._ticker: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None

    async def submit(self, record: RunRecord) -> None:
        await self.submitter.submit(record)

    async def stage(self, claim: AsyncConnection, record: RunRecord) -> None:
        await self.submitter.enqueue(claim, record)  # commits with the claim

    async def publish(self, record: RunRecord) -> None:
        self.bus.wake()  # the record committed with the claim: nothing can fail here

    async def start(self) -> None:
        s = self.settings
        self.workers = WorkerPool(self.runner, self.bus, s.workers, s.bus_poll_seconds)
        self.workers.start()
        self._stop.clear()
        self._ticker = asyncio.create_task(
            run_ticker(self.runner, s.buffer_tick_seconds, self._stop)
        )
        self._listener = asyncio.create_task(self.bus.listen(self.database_url))

    async def unavailable(self) -> str | None:
        return None  # the bus is the database, which /readyz checks itself

    async def stop(self) -> None:
        self._stop.set()
        if self.workers is not None:
            await self.workers.stop()
            self.workers = None
        if self._ticker is not None:
            await self._ticker
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
        self._ticker = self._listener = None
