"""Writing new runs to the embedded bus: the run row and its bus record in one transaction.

Group commit: adds that arrive while a transaction is committing share the next one. Each
add is still acknowledged only after its own rows are committed. Under load this turns N
transactions (N fsyncs, 3N statements) into one of three statements; an idle system commits
each add at once. A batch that fails is retried one add per transaction, so one bad row
cannot refuse the adds that happened to share its transaction. Adds waiting for the next
transaction are bounded (MNEMO_MAX_QUEUED_ADDS): past that an add is refused with 503.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo.batching import MicroBatcher, QueueFull
from mnemo.bus.base import PIPELINE_CHANNEL, RUN
from mnemo.bus.postgres import PostgresBus
from mnemo.core.records import RunRecord
from mnemo.core.transport import TransportUnavailable
from mnemo.store import runs


class PostgresSubmitter:
    def __init__(
        self, db: AsyncEngine, bus: PostgresBus, max_batch: int = 256, max_pending: int = 10_000
    ) -> None:
        self.db = db
        self.bus = bus
        self._batcher: MicroBatcher[RunRecord, BaseException | None] = MicroBatcher(
            self._write_batch, max_batch, max_pending
        )

    async def submit(self, record: RunRecord) -> None:
        """Returns once the run row and its bus record are committed; raises if not
        (TransportUnavailable, nothing stored, when `max_pending` adds already wait)."""
        try:
            (failure,) = await self._batcher.run([record])
        except QueueFull as exc:
            raise TransportUnavailable(
                f"the server's add queue is full ({exc}); nothing was stored"
            ) from exc
        if failure is not None:
            raise failure

    async def enqueue(self, tx: AsyncConnection, record: RunRecord) -> None:
        """Publish an existing run again inside `tx` (a retry); `wake` after commit."""
        await self.bus.publish(tx, PIPELINE_CHANNEL, record.scope_key, _bus_payload(record))

    async def _write_batch(self, records: list[RunRecord]) -> list[BaseException | None]:
        try:
            await self._write(records)
            return [None] * len(records)
        except Exception as exc:
            if len(records) == 1:
                return [exc]
        return [await self._write_alone(record) for record in records]

    async def _write_alone(self, record: RunRecord) -> BaseException | None:
        try:
            await self._write([record])
            return None
        except Exception as exc:
            return exc

    async def _write(self, records: list[RunRecord]) -> None:
        async with self.db.begin() as tx:
            await runs.create(tx, [r.to_row() for r in records])
            await self.bus.publish_many(
                tx, PIPELINE_CHANNEL, [(r.scope_key, _bus_payload(r)) for r in records]
            )
        self.bus.wake(len(records))


def _bus_payload(record: RunRecord) -> dict[str, Any]:
    payload: dict[str, Any] = {"kind": RUN, "run_id": record.run_id}
    if record.trace:
        payload["trace"] = record.trace  # the run's trace goes on in the worker
    return payload
