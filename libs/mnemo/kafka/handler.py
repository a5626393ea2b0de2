"""Processing consumed records: at-least-once, with transient retries and a DLQ.

`consume` reads an agent's stream with manual acks and runs records of different scope keys
at once (`Lanes`: each key in order, at most `MNEMO_KAFKA_CONCURRENCY` running). A record is
done when its outputs are acknowledged by the broker; its offset is acknowledged to faust
once every earlier record of its partition is done, and faust commits it after that.
Failures follow `mnemo.core.failures`, the rule of both modes: Postgres or broker outages
are retried in place with backoff (the key waits, order holds); any other failure is
poison: DLQ record plus `failed` status for its runs, at once. So is a record whose work
outlives the run time budget (`mnemo.core.budget`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from faust.types import TP

from mnemo import metrics
from mnemo.core.backoff import transient_backoff
from mnemo.core.budget import time_budget
from mnemo.core.failures import describe, is_transient
from mnemo.domain.memory import RunState
from mnemo.kafka import metrics as kmetrics
from mnemo.kafka.continuity import Continuity, holds_records
from mnemo.kafka.dlqops import REPLAY_HEADER
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.installation import foreign, record_installation
from mnemo.kafka.lanes import Lanes
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.stages.failures import dead_letter
from mnemo.kafka.stages.routing import Emit
from mnemo.kafka.watchdog import leave
from mnemo.tracing import spans
from mnemo.tracing.pipeline import MAX_RUN_IDS, record_span
from mnemo.tracing.spans import AttributeValue, Carrier

log = logging.getLogger(__name__)
# Records read ahead per running slot: room to find other keys behind a busy one.
LOOKAHEAD = 4


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
    replay_of: str | None = None  # set on a record `mnemo dlq replay` re-published
    trace: Carrier = field(default_factory=dict)  # the W3C trace headers it carried
    installation: str | None = None  # the installation id it carried (None: no header)
    # The faust event, held for as long as the record's work runs: faust finds the event a
    # table write belongs to through a weak reference (`faust.streams.current_event`). After
    # a rebalance re-delivers a record, its first delivery may still be running with nothing
    # else holding that event, and a collected event failed the write ("Cannot modify table
    # key from outside of stream iteration") and the run with it.
    event: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, event: Any) -> Incoming:
        m = event.message
        key = m.key.decode("utf-8", errors="replace") if m.key is not None else None
        stamp = datetime.fromtimestamp(m.timestamp, UTC) if m.timestamp else None
        headers = m.headers.items() if isinstance(m.headers, dict) else (m.headers or [])
        replay_of = next((v for k, v in headers if k == REPLAY_HEADER), None)
        return cls(m.topic, m.partition, m.offset, key, m.value, timestamp=stamp,
                   replay_of=replay_of.decode() if replay_of else None,
                   trace=spans.from_headers(m.headers),
                   installation=record_installation(m.headers), event=event)  # fmt: skip


Work = Callable[[Incoming], Awaitable[list[Emit]]]
# The work for a record, or None for a record that is not data (the buffer's tick): it runs
# as its partition's barrier and is not counted as a record in.
Route = Callable[[Incoming], tuple[Work, bool]]


async def consume(rt: Runtime, stream: Any, route: Route) -> None:
    """Process an agent's stream: each record through `handle`, scope keys concurrently."""
    lanes = Lanes(rt.ks.concurrency, rt.ks.concurrency * LOOKAHEAD)
    continuity = Continuity()
    try:
        async for event in stream.noack().events():
            incoming = Incoming.of(event)
            same_installation(rt, incoming)
            work, is_data = route(incoming)
            if is_data:  # a skipped tick loses nothing: the next one does its work
                await in_sequence(rt, continuity, incoming)
            tp = (incoming.topic, incoming.partition)
            key = (incoming.key or "") if is_data else None
            await lanes.submit(
                tp, incoming.offset, key, _runner(rt, incoming, work, is_data), event.ack,
                partition=incoming.partition,
            )  # fmt: skip
    finally:
        await lanes.close()


def same_installation(rt: Runtime, incoming: Incoming) -> None:
    """Leave the group, without acknowledging the record, when it belongs to another
    installation than this stage's database (mnemo.kafka.installation): processing it here
    would drop or misfile its run."""
    where = f"{incoming.topic}[{incoming.partition}]@{incoming.offset}"
    refusal = foreign(rt.service, where, incoming.installation, rt.installation_id)
    if refusal is not None:
        leave(refusal)


async def in_sequence(rt: Runtime, continuity: Continuity, incoming: Incoming) -> None:
    """Restart the stage if faust skipped records before this one (`mnemo.kafka.continuity`)."""
    tp = TP(incoming.topic, incoming.partition)
    # faust 0.15.3's own record of the committed offsets, set when partitions are assigned.
    committed = getattr(rt.app.consumer, "_committed_offset", {}).get(tp)
    generation = rt.app.consumer_generation_id
    hole = continuity.hole(tp, incoming.offset, generation, committed)
    if hole is None:
        return
    topic, partition, offset = incoming.topic, incoming.partition, incoming.offset
    if await holds_records(rt.ks.bootstrap_servers, topic, partition, hole, offset):
        leave(f"{rt.service}: faust skipped {topic}[{partition}] offsets {hole}..{offset - 1}")
    continuity.take(tp, offset)


def _runner(rt: Runtime, incoming: Incoming, work: Work, is_data: bool) -> Callable[[], Any]:
    async def run() -> None:
        if not is_data:  # a tick: not traced
            await handle(rt, incoming, work)
            return
        channel = rt.names.kind_of(incoming.topic).value
        metrics.RECORDS_IN.labels(service=rt.service, channel=channel).inc()
        await traced(rt, incoming, work)

    return run


async def traced(rt: Runtime, incoming: Incoming, work: Work) -> None:
    """`handle` in the trace of the record's run (its headers' context)."""
    attributes: dict[str, AttributeValue | None] = {
        "messaging.system": "kafka",
        "messaging.destination.name": incoming.topic,
        "messaging.destination.partition.id": str(incoming.partition),
        "messaging.kafka.offset": incoming.offset,
        "messaging.consumer.group.name": rt.ks.group_id(rt.service),
    }
    traces = [incoming.trace] if incoming.trace else []
    with record_span(f"mnemo.process {incoming.topic}", traces, attributes) as span:
        if not await handle(rt, incoming, work):
            span.fail("dead_lettered", f"record sent to the DLQ by {rt.service}")
        span.set("mnemo.run_ids", incoming.run_ids[:MAX_RUN_IDS])


async def handle(rt: Runtime, incoming: Incoming, work: Work) -> bool:
    """Run `work` for the record until it succeeds or turns out to be poison; False when
    it was poison (dead-lettered)."""
    backoff = transient_backoff(rt.settings)
    while True:
        try:
            async with time_budget(rt.settings.run_time_budget_seconds):
                emits = await work(incoming)
            await rt.emit(emits)
            return True
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not is_transient(exc):
                await _dead_letter(rt, incoming, exc)
                return False
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
        replay_of=incoming.replay_of,
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
    backoff = transient_backoff(rt.settings)
    while True:
        try:
            await rt.emit(emits)
            return
        except Exception as send_exc:  # the broker is down: the record must not be skipped
            log.warning("%s: DLQ publish failed (%s); retrying", rt.service, describe(send_exc))
            await asyncio.sleep(backoff.next())
