"""The Kafka transport: run row in Postgres, raw event on the broker.

`submit` returns only after the broker acknowledged the raw event (acks=all, idempotent
producer). If producing fails the row is deleted again and the add answers 503: nothing of
the run remains, as the `RunTransport` contract requires. A retry publishes the claimed
run's raw event again; if the broker does not take it, the Engine fails the run again.
An erase first asks where the raw topic ends (`raw_log_position`, for the tombstone); if
the broker cannot say, the erase answers 503 and removes nothing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo.core.failures import describe
from mnemo.core.records import RunRecord
from mnemo.core.transport import TransportUnavailable
from mnemo.events.codec import encode
from mnemo.events.raw import RawEvent
from mnemo.kafka.channels import channel_names, ensure_channels
from mnemo.kafka.reader import partitions
from mnemo.settings import SERVICES, KafkaSettings
from mnemo.store import runs
from mnemo.store.schema import runs as runs_table

log = logging.getLogger(__name__)
BROKER_CHECK_SECONDS = 3.0


def raw_event(record: RunRecord) -> RawEvent:
    """The raw event of a run (what outside producers would publish)."""
    return RawEvent(
        run_id=record.run_id,
        project=record.project,
        group=record.group,
        user_id=record.user_id,
        properties=record.properties,
        input=record.input,
        root=record.starting_step_id,
        created_at=record.created_at,
        origin="gateway",
    )


class KafkaTransport:
    # The stage services are this transport's pipeline workers.
    worker_roles: tuple[str, ...] = SERVICES

    def __init__(self, ks: KafkaSettings, db: AsyncEngine) -> None:
        self.ks = ks
        self.db = db
        self.raw_topic = channel_names(ks).raw
        self._producer: AIOKafkaProducer | None = None

    async def start(self) -> None:
        """Connect the producer (the channels' topics are created if missing)."""
        await ensure_channels(self.ks)
        producer = AIOKafkaProducer(
            bootstrap_servers=self.ks.bootstrap_servers,
            acks="all",
            enable_idempotence=True,
            request_timeout_ms=int(self.ks.produce_timeout_seconds * 1000),
        )
        await producer.start()
        self._producer = producer

    async def check(self) -> str | None:
        """None when a broker answers a metadata request within a few seconds."""
        if self._producer is None:
            return "the Kafka producer is not running"
        try:
            async with asyncio.timeout(BROKER_CHECK_SECONDS):
                await self._producer.client.fetch_all_metadata()
        except Exception as exc:
            return f"broker unreachable ({describe(exc, 200)})"
        return None

    async def stop(self) -> None:
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None

    async def submit(self, record: RunRecord) -> None:
        async with self.db.begin() as tx:
            await runs.create(tx, [record.to_row()])
        try:
            await self._produce(record)
        except Exception as exc:
            async with self.db.begin() as tx:
                await tx.execute(delete(runs_table).where(runs_table.c.run_id == record.run_id))
            log.warning("add %s not acknowledged by the broker: %s", record.run_id, exc)
            raise TransportUnavailable("the event bus is unavailable; nothing was stored") from exc

    async def raw_log_position(self) -> dict[str, Any] | None:
        """The raw topic's end offsets now: records below them were appended before."""
        try:
            offsets = await asyncio.wait_for(
                self._raw_end_offsets(), self.ks.produce_timeout_seconds
            )
        except Exception as exc:
            raise TransportUnavailable(
                f"the event bus is unavailable; nothing was erased ({exc.__class__.__name__})"
            ) from exc
        return {"topic": self.raw_topic, "offsets": offsets}

    async def _raw_end_offsets(self) -> dict[str, int]:
        found = (await partitions(self.ks.bootstrap_servers, [self.raw_topic]))[self.raw_topic]
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.ks.bootstrap_servers, enable_auto_commit=False
        )
        await consumer.start()
        try:
            ends = await consumer.end_offsets([TopicPartition(self.raw_topic, p) for p in found])
        finally:
            await consumer.stop()
        return {str(tp.partition): offset for tp, offset in ends.items()}

    async def stage(self, claim: AsyncConnection, record: RunRecord) -> None:
        """Nothing: the raw event is published once the claim has committed."""

    async def publish(self, record: RunRecord) -> None:
        await self._produce(record)

    async def _produce(self, record: RunRecord) -> None:
        if self._producer is None:
            raise ConnectionError("the Kafka producer is not running")
        await asyncio.wait_for(
            self._producer.send_and_wait(
                self.raw_topic, encode(raw_event(record)), key=record.scope_key.encode()
            ),
            self.ks.produce_timeout_seconds,
        )
