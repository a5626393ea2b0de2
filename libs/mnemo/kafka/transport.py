"""The Kafka transport: run row in Postgres, raw event on the broker.

`submit` returns only after the broker acknowledged the raw event (acks=all, idempotent
producer). If producing fails the row is deleted again and the add answers 503: nothing of
the run remains, as the `RunTransport` contract requires. A retry publishes the claimed
run's raw event again; if the broker does not take it, the Engine fails the run again.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaProducer
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo.core.records import RunRecord
from mnemo.core.transport import TransportUnavailable
from mnemo.events.codec import encode
from mnemo.events.raw import RawEvent
from mnemo.kafka.channels import channel_names, ensure_channels
from mnemo.settings import KafkaSettings
from mnemo.store import runs
from mnemo.store.schema import runs as runs_table

log = logging.getLogger(__name__)


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
        recalled=record.recalled,
        origin="gateway",
    )


class KafkaTransport:
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
