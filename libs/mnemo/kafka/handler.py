"""Processing one consumed record: at-least-once, with transient retries and a DLQ.

A record is done when its outputs are acknowledged by the broker; faust commits its offset
after that. Failures follow `mnemo.core.failures`, the rule of both modes: Postgres or broker
outages are retried in place with backoff (the partition waits, order holds); any other
failure is poison: DLQ record plus `failed` status for its runs, at once. So is a record
whose work outlives the run time budget (`mnemo.core.budget`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mnemo import metrics
from mnemo.core.budget import time_budget
from mnemo.core.failures import Backoff, describe, is_transient
from mnemo.domain.memory import RunState
from mnemo.events.channels import ChannelKind
from mnemo.kafka import metrics as kmetrics
from mnemo.kafka.runtime import Runtime
from mnemo.stages.failures import dead_letter
from mnemo.stages.routing import Emit

log = logging.getLogger(__name__)


@dataclass
class Incoming:
    """The consumed record, and what its handler learned about its runs while decoding.
    `topic` is the Kafka topic it came from; `key` its Kafka key."""

    topic: str
    partition: int
    offset: int
    key: str | None
    value: bytes | None
    run_ids: list[str] = field(default_factory=list)
    scope_key: str | None = None
    timestamp: datetime | None = None  # the broker's record timestamp

    @classmethod
    def of(cls, event: Any) -> Incoming:
        m = event.message
        key = m.key.decode("utf-8", errors="replace") if m.key is not None else None
        stamp = datetime.fromtimestamp(m.timestamp, UTC) if m.timestamp else None
        return cls(m.topic, m.partition, m.offset, key, m.value, timestamp=stamp)


Work = Callable[[Incoming], Awaitable[list[Emit]]]


async def handle(rt: Runtime, incoming: Incoming, work: Work) -> None:
    """Run `work` for the record until it succeeds or turns out to be poison."""
    metrics.RECORDS_IN.labels(stage=rt.service).inc()
    backoff = Backoff(rt.ks.transient_backoff_seconds)
    while True:
        try:
            async with time_budget(rt.settings.run_time_budget_seconds):
                emits = await work(incoming)
            await rt.emit(emits)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not is_transient(exc):
                await _dead_letter(rt, incoming, exc)
                return
            kmetrics.TRANSIENT_RETRIES.labels(service=rt.service).inc()
            log.warning("%s: transient failure (%s); retrying", rt.service, describe(exc))
            await asyncio.sleep(backoff.next())


async def _dead_letter(rt: Runtime, incoming: Incoming, exc: Exception) -> None:
    record, status = dead_letter(
        exc,
        service=rt.service,
        topic=incoming.topic,
        partition=incoming.partition,
        offset=incoming.offset,
        key=incoming.key,
        payload=incoming.value,
        run_ids=incoming.run_ids,
        scope_key=incoming.scope_key,
        now=rt.clock.now(),
    )
    log.warning(
        "%s: dead-lettered %s[%d]@%d (runs %s): %s",
        rt.service, incoming.topic, incoming.partition, incoming.offset,
        incoming.run_ids, record.error,
    )  # fmt: skip
    emits = [Emit(ChannelKind.dlq, incoming.key or "", record)] if rt.ks.dlq_enabled else []
    if status is not None:
        emits.append(Emit(ChannelKind.status, status.scope_key, status))
        metrics.RUNS.labels(status=RunState.failed.value).inc(len(status.run_ids))
    kmetrics.DLQ_RECORDS.labels(service=rt.service, reason=record.reason).inc()
    backoff = Backoff(rt.ks.transient_backoff_seconds)
    while True:
        try:
            await rt.emit(emits)
            return
        except Exception as send_exc:  # the broker is down: the record must not be skipped
            log.warning("%s: DLQ publish failed (%s); retrying", rt.service, describe(send_exc))
            await asyncio.sleep(backoff.next())
