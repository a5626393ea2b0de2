"""Pipeline workers: claim the head record of a scope, run it, acknowledge it, repeat.

`concurrency` workers run at once, so that many different scopes progress in parallel
while each scope's records stay strictly in order (the bus guarantees it). A failure is
classified by `mnemo.core.failures`: a transient one (the database unreachable) leaves the
record in place and the worker backs off; any other fails the record's runs at once. A
record that outlives its time budget fails its runs too (`mnemo.core.budget`); it may have
been cancelled mid-statement, so that failure is written in a transaction of its own.
"""

from __future__ import annotations

import asyncio
import logging
import time

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo import metrics
from mnemo.core.backoff import transient_backoff
from mnemo.core.budget import RunTimeBudgetExceeded, time_budget
from mnemo.core.failures import describe, is_transient
from mnemo.domain.memory import RunState
from mnemo.embedded.bus.base import PIPELINE_CHANNEL, Record
from mnemo.embedded.bus.postgres import PostgresBus
from mnemo.embedded.runner import PipelineRunner
from mnemo.store import runs

log = logging.getLogger(__name__)

IDLE_POLL_FACTOR = 25


def run_ids_of(record: Record) -> list[str]:
    payload = record.payload
    return list(payload["run_ids"] if "run_ids" in payload else [payload["run_id"]])


class WorkerPool:
    def __init__(
        self,
        runner: PipelineRunner,
        bus: PostgresBus,
        concurrency: int,
        poll_seconds: float,
        budget_seconds: float,
    ) -> None:
        self.runner = runner
        self.bus = bus
        self.concurrency = concurrency
        self.poll_seconds = poll_seconds
        self.budget_seconds = budget_seconds
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = asyncio.Event()
        self._busy: dict[int, float] = {}  # id of the task running a record -> since when

    def longest_busy_seconds(self) -> float:
        """How long the record that has held its worker the longest has held it (0: idle)."""
        now = time.monotonic()
        return max((now - since for since in self._busy.values()), default=0.0)

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._loop(i), name=f"mnemo-worker-{i}")
            for i in range(self.concurrency)
        ]

    async def stop(self) -> None:
        self._stopping.set()
        self.bus.wakeup.wake_all()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def _loop(self, index: int) -> None:
        backoff = transient_backoff(self.runner.deps.settings)
        while not self._stopping.is_set():
            try:
                worked = await self.run_once()
            except Exception as exc:
                if is_transient(exc):
                    log.warning("worker %d: database unavailable (%s); retrying", index, exc)
                else:
                    log.exception("worker %d: unexpected error", index)
                await asyncio.sleep(backoff.next())
                continue
            backoff.reset()
            if worked:
                self.bus.wake()  # more may be ready: fan out one worker at a time
            else:
                await self.bus.wakeup.wait(self._idle_timeout(index))

    def _idle_timeout(self, index: int) -> float:
        """Worker 0 polls every `poll_seconds` as the safety net for a lost wakeup (e.g. the
        listener reconnecting); the others rely on wakeups and poll rarely."""
        return self.poll_seconds if index == 0 else self.poll_seconds * IDLE_POLL_FACTOR

    async def run_once(self) -> bool:
        """Process one record if one is ready. Returns whether one was."""
        key = id(asyncio.current_task())
        self._busy[key] = time.monotonic()
        try:
            return await self._run_once()
        finally:
            del self._busy[key]

    async def _run_once(self) -> bool:
        db = self.runner.deps.db
        failure: tuple[Record, Exception] | None = None
        claimed: Record | None = None
        try:
            async with db.connect() as tx:
                async with tx.begin():
                    claimed = record = await self.bus.claim(tx, (PIPELINE_CHANNEL,))
                    if record is None:
                        return False
                    savepoint = await tx.begin_nested()
                    try:
                        async with time_budget(self.budget_seconds):
                            await self.runner.handle(tx, record)
                        await savepoint.commit()
                    except RunTimeBudgetExceeded:
                        raise  # the transaction may be unusable: fail the runs in a new one
                    except Exception as exc:
                        if is_transient(exc):
                            raise  # the transaction aborts, the record stays for a retry
                        # The pipeline failed: record it, keep the raw input for a retry.
                        await savepoint.rollback()
                        failure = (record, exc)
                        await self._fail(tx, record, exc)
                    await self.bus.ack(tx, record)
        except RunTimeBudgetExceeded as exc:
            assert claimed is not None
            failure = (claimed, exc)
            await self._fail_overrun(claimed, exc)
        if failure:
            log.warning("runs %s failed: %s", run_ids_of(failure[0]), describe(failure[1]))
        return True

    async def _fail(self, tx: AsyncConnection, record: Record, exc: Exception) -> None:
        ids = run_ids_of(record)
        now = self.runner.deps.clock.now()
        await runs.set_status(tx, ids, RunState.failed, now, error=describe(exc))
        metrics.RUNS.labels(status=RunState.failed.value).inc(len(ids))

    async def _fail_overrun(self, record: Record, exc: Exception) -> None:
        """Fail and acknowledge `record` after its transaction was abandoned, unless another
        worker has claimed it meanwhile (that worker then decides its fate)."""
        async with self.runner.deps.db.begin() as tx:
            if await self.bus.claim_id(tx, record.id):
                await self._fail(tx, record, exc)
                await self.bus.ack(tx, record)
