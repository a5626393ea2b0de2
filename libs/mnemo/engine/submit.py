"""Handing an acknowledged add to the pipeline.

The contract: `submit` returns only when the run row and its raw input are durable and the
pipeline will pick the run up; if it raises, nothing of the run may remain. The embedded
default writes both to Postgres in one transaction; the distributed mode publishes to Kafka.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.batching import MicroBatcher
from mnemo.bus.base import PIPELINE_TOPIC, RUN
from mnemo.bus.postgres import PostgresBus
from mnemo.store import runs


class RunSubmitter(Protocol):
    async def submit(self, row: Mapping[str, Any]) -> None:
        """Durably record a new run (a `runs` row) and enqueue it."""
        ...

    async def resubmit(self, row: Mapping[str, Any]) -> None:
        """Enqueue an existing (failed) run again from its kept raw input."""
        ...


class PostgresSubmitter:
    """Group commit: adds that arrive while a transaction is committing share the next one.

    Each add is still acknowledged only after its own rows are committed. Under load this
    turns N transactions (N fsyncs, 3N statements) into one of three statements; an idle
    system commits each add at once. A batch that fails is retried one add per transaction,
    so one bad row cannot refuse the adds that happened to share its transaction.
    """

    def __init__(self, db: AsyncEngine, bus: PostgresBus, max_batch: int = 256) -> None:
        self.db = db
        self.bus = bus
        self._batcher: MicroBatcher[Mapping[str, Any], BaseException | None] = MicroBatcher(
            self._write_batch, max_batch
        )

    async def submit(self, row: Mapping[str, Any]) -> None:
        (failure,) = await self._batcher.run([row])
        if failure is not None:
            raise failure

    async def resubmit(self, row: Mapping[str, Any]) -> None:
        async with self.db.begin() as tx:
            await self.bus.publish(tx, PIPELINE_TOPIC, row["scope_key"], _run_record(row))
        self.bus.wake()

    async def _write_batch(self, rows: list[Mapping[str, Any]]) -> list[BaseException | None]:
        try:
            await self._write(rows)
            return [None] * len(rows)
        except Exception as exc:
            if len(rows) == 1:
                return [exc]
        return [await self._write_alone(row) for row in rows]

    async def _write_alone(self, row: Mapping[str, Any]) -> BaseException | None:
        try:
            await self._write([row])
            return None
        except Exception as exc:
            return exc

    async def _write(self, rows: list[Mapping[str, Any]]) -> None:
        async with self.db.begin() as tx:
            await runs.create(tx, rows)
            await self.bus.publish_many(
                tx, PIPELINE_TOPIC, [(row["scope_key"], _run_record(row)) for row in rows]
            )
        self.bus.wake(len(rows))


def _run_record(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"kind": RUN, "run_id": row["run_id"]}
