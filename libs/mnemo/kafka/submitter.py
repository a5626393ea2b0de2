"""The distributed gateway's RunSubmitter: run row in Postgres, raw event on Kafka.

`submit` returns only after the broker acknowledged the raw event (acks=all, idempotent
producer). If producing fails the row is deleted again and the add answers 503: nothing of
the run remains, as the RunSubmitter contract requires.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaProducer
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.domain.inputs import AddInput
from mnemo.domain.requests import InvalidRequest
from mnemo.events.codec import encode
from mnemo.events.raw import RawEvent
from mnemo.kafka.settings import KafkaSettings
from mnemo.kafka.topics import ensure_topics, topic_names
from mnemo.store import runs
from mnemo.store.schema import runs as runs_table

log = logging.getLogger(__name__)


class BusUnavailable(InvalidRequest):
    """The broker did not acknowledge the add; nothing was stored (HTTP 503)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail, status=503)


def raw_event(row: Mapping[str, Any]) -> RawEvent:
    """The raw record of a run row (what outside producers would publish)."""
    return RawEvent(
        run_id=row["run_id"],
        project=row["project"],
        group=row["group"],
        user_id=row["user_id"],
        properties=dict(row["properties"] or {}),
        input=AddInput.model_validate(row["raw_input"]),
        root=row["starting_step_id"],
        created_at=row["created_at"],
        origin="gateway",
    )


class KafkaRunSubmitter:
    def __init__(self, ks: KafkaSettings) -> None:
        self.ks = ks
        self.topic = topic_names(ks).raw
        self.db: AsyncEngine | None = None
        self._producer: AIOKafkaProducer | None = None

    async def start(self, db: AsyncEngine) -> None:
        """Bind the database and connect the producer (topics are created if missing)."""
        self.db = db
        await ensure_topics(self.ks)
        self._producer = AIOKafkaProducer(
            bootstrap_servers=self.ks.kafka_bootstrap_servers,
            acks="all",
            enable_idempotence=True,
            request_timeout_ms=int(self.ks.kafka_produce_timeout_seconds * 1000),
        )
        await self._producer.start()

    async def close(self) -> None:
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None

    async def submit(self, row: Mapping[str, Any]) -> None:
        assert self.db is not None, "KafkaRunSubmitter.start() was not called"
        async with self.db.begin() as tx:
            await runs.create(tx, [row])
        try:
            await self._produce(row)
        except Exception as exc:
            async with self.db.begin() as tx:
                await tx.execute(delete(runs_table).where(runs_table.c.run_id == row["run_id"]))
            log.warning("add %s not acknowledged by the broker: %s", row["run_id"], exc)
            raise BusUnavailable("the event bus is unavailable; nothing was stored") from exc

    async def resubmit(self, row: Mapping[str, Any]) -> None:
        try:
            await self._produce(row)
        except Exception as exc:
            raise BusUnavailable("the event bus is unavailable; retry later") from exc

    async def _produce(self, row: Mapping[str, Any]) -> None:
        if self._producer is None:
            raise RuntimeError("the Kafka producer is not running")
        await asyncio.wait_for(
            self._producer.send_and_wait(
                self.topic, encode(raw_event(row)), key=str(row["scope_key"]).encode()
            ),
            self.ks.kafka_produce_timeout_seconds,
        )
