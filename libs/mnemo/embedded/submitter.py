"""Writing new runs to the embedded bus: the run row and its bus record in one transaction.

Group commit: adds that arrive while a transaction is committing share the next one. Each
add is still acknowledged only after its own rows are committed. Under load this turns N
transactions (N fsyncs, 3N statements) into one of three statements; an idle system commits
each add at once. A batch that fails is retried one add per transaction, so one bad row
cannot refuse the adds that happened to share its transaction. Adds waiting for the next
transaction are bounded (MNEMO_MAX_QUEUED_ADDS): past that an add is refused with 503.

An add with an idempotency key claims it in the same transaction as its run row; an add
whose key is taken (by an earlier add, or by another add of the same transaction) writes
nothing and is answered with `KeyTaken`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo.batching import MicroBatcher, QueueFull
from mnemo.core.records import RunRecord
from mnemo.core.transport import TransportUnavailable
from mnemo.domain.idempotency import IdempotencyClaim, KeyTaken
from mnemo.embedded.bus.base import PIPELINE_CHANNEL, RUN
from mnemo.embedded.bus.postgres import PostgresBus
from mnemo.store import idempotency, runs


@dataclass(frozen=True)
class Submission:
    record: RunRecord
    claim: IdempotencyClaim | None = None


class PostgresSubmitter:
    def __init__(
        self, db: AsyncEngine, bus: PostgresBus, max_batch: int = 256, max_pending: int = 10_000
    ) -> None:
        self.db = db
        self.bus = bus
        self._batcher: MicroBatcher[Submission, BaseException | None] = MicroBatcher(
            self._write_batch, max_batch, max_pending
        )

    async def submit(self, record: RunRecord, claim: IdempotencyClaim | None = None) -> None:
        """Returns once the run row and its bus record are committed; raises if not
        (TransportUnavailable, nothing stored, when `max_pending` adds already wait;
        KeyTaken when `claim`'s key is held by another add)."""
        try:
            (failure,) = await self._batcher.run([Submission(record, claim)])
        except QueueFull as exc:
            raise TransportUnavailable(
                f"the server's add queue is full ({exc}); nothing was stored"
            ) from exc
        if failure is not None:
            raise failure

    async def enqueue(self, tx: AsyncConnection, record: RunRecord) -> None:
        """Publish an existing run again inside `tx` (a retry); `wake` after commit."""
        await self.bus.publish(tx, PIPELINE_CHANNEL, record.scope_key, _bus_payload(record))

    async def _write_batch(self, batch: list[Submission]) -> list[BaseException | None]:
        try:
            return await self._write(batch)
        except Exception as exc:
            if len(batch) == 1:
                return [exc]
        return [await self._write_alone(submission) for submission in batch]

    async def _write_alone(self, submission: Submission) -> BaseException | None:
        try:
            (outcome,) = await self._write([submission])
            return outcome
        except Exception as exc:
            return exc

    async def _write(self, batch: list[Submission]) -> list[BaseException | None]:
        """Write the batch in one transaction; per submission None, or KeyTaken."""
        async with self.db.begin() as tx:
            taken = await _claim_keys(tx, batch)
            records = [s.record for i, s in enumerate(batch) if i not in taken]
            await runs.create(tx, [r.to_row() for r in records])
            await self.bus.publish_many(
                tx, PIPELINE_CHANNEL, [(r.scope_key, _bus_payload(r)) for r in records]
            )
        if records:
            self.bus.wake(len(records))
        return [taken.get(i) for i in range(len(batch))]


async def _claim_keys(tx: AsyncConnection, batch: list[Submission]) -> dict[int, KeyTaken]:
    """Claim the batch's idempotency keys; the positions whose key is taken (the first of
    two adds with one key in a batch gets it, as if they had come one after the other)."""
    first: dict[tuple[str, str], IdempotencyClaim] = {}
    for s in batch:
        if s.claim is not None:
            first.setdefault((s.claim.project, s.claim.key), s.claim)
    won = await idempotency.claim(tx, list(first.values()))
    return {
        i: KeyTaken(s.claim)
        for i, s in enumerate(batch)
        if s.claim is not None
        and (
            (s.claim.project, s.claim.key) not in won
            or first[s.claim.project, s.claim.key] is not s.claim
        )
    }


def _bus_payload(record: RunRecord) -> dict[str, Any]:
    payload: dict[str, Any] = {"kind": RUN, "run_id": record.run_id}
    if record.trace:
        payload["trace"] = record.trace  # the run's trace goes on in the worker
    return payload
