"""How the Engine hands runs to a pipeline: the contract both transports implement.

The embedded transport (`mnemo.embedded`) keeps its queue in the Postgres database the runs
live in; the Kafka transport (`mnemo.kafka`) publishes raw events to a broker. The Engine
only knows this protocol, so it never loads the embedded runner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.core.records import RunRecord
from mnemo.domain.idempotency import IdempotencyClaim
from mnemo.domain.requests import InvalidRequest, Refusal

RETRY_AFTER_SECONDS = 5


class TransportUnavailable(InvalidRequest):
    """The pipeline's queue did not take the run (HTTP 503 with Retry-After): a new add
    left nothing behind, a retried run is failed again as it was."""

    def __init__(self, detail: str, retry_after: int = RETRY_AFTER_SECONDS) -> None:
        super().__init__(detail, kind=Refusal.unavailable, retry_after=retry_after)


@dataclass(frozen=True)
class Backlog:
    """What waits in the pipeline's queue, per record kind: on the embedded bus the kind of
    bus record (`run`, `flush`), in Kafka mode the channel's topic."""

    kind: str
    records: int  # records not yet processed
    oldest_seconds: float  # how long the oldest of them has waited; 0 when none wait


class RunTransport(Protocol):
    # The heartbeat roles of the processes that run this transport's pipeline: /readyz
    # wants a live one of each.
    worker_roles: tuple[str, ...]
    # The broker the queue lives on, for operators (e.g. "kafka 127.0.0.1:9092"); None
    # when the queue is in the database.
    broker: str | None

    async def check(self) -> str | None:
        """None when what the transport needs beyond the database (a broker) answers, else
        what is wrong, briefly. Returns within a few seconds."""
        ...

    async def submit(self, record: RunRecord, idempotency: IdempotencyClaim | None = None) -> None:
        """Durably record a new run (its `runs` row) and enqueue it.

        Returns only when both are durable and the pipeline will pick the run up. If it
        raises, nothing of the run remains (the add is refused). With `idempotency`, the
        key is claimed in the transaction that writes the run's row; if another add holds
        it, this raises `KeyTaken` and stores nothing.
        """
        ...

    async def stage(self, claim: AsyncConnection, record: RunRecord) -> None:
        """First half of a retry, inside the transaction that claims the failed run.

        A transport whose queue lives in the database enqueues the run here, so the claim
        and the enqueue commit together or not at all (its `publish` then must not fail);
        others do nothing.
        """
        ...

    async def publish(self, record: RunRecord) -> None:
        """Second half of a retry, once the claim has committed.

        A transport with its own broker publishes the run here and returns once the broker
        acknowledged it; it raises otherwise, and the Engine sets the run back to failed.
        """
        ...

    async def raw_log_position(self) -> dict[str, Any] | None:
        """Where the transport's retained log of raw adds ends now, for an erase's tombstone:
        `{"topic": name, "offsets": {partition: end offset}}`, or None when it keeps no such
        log. Raises if the log cannot be asked (the erase is then refused, nothing removed)."""
        ...

    async def backlog(self) -> list[Backlog]:
        """The queue's backlog now, one entry per kind (kinds with nothing waiting
        included, at 0). Raises if the queue cannot be asked."""
        ...

    async def start(self) -> None:
        """Start background work (pipeline workers, broker connections)."""
        ...

    async def stop(self) -> None:
        """Stop what `start` started; idempotent."""
        ...
