"""The Kafka transport: run row in Postgres, raw event on the broker.

`submit` returns once the broker acknowledged the raw event (acks=all, idempotent producer),
or refuses the add (503) after `produce_timeout_seconds`, however long the outage. The
producer may still deliver a refused record later (its batch outlives the wait), so the
refusal is recorded first: the run row is deleted on condition that the extractor has not
taken the run (`runs.refuse` vs `runs.admit`), and the extractor and `mnemo replay` process
only gateway records whose row exists. If the extractor took the record first, the add went
through after all and is answered as accepted. An idempotency key claimed with the run row
is released with a refused add. A retry publishes the claimed run's raw event
again; if the broker does not take it, the Engine fails the run again (same arbitration).
A producer whose idempotence state the broker no longer accepts (OutOfOrderSequenceNumber and
its kin, seen after a broker outage: `mnemo.kafka.producer`) would refuse every add on those
partitions until a restart: such a failure replaces the producer at once (a new producer id
starts new sequences). While adds are refused, `check` says so, so /readyz answers 503 instead of
ready. An erase first asks where the raw topic ends (`raw_log_position`, for the tombstone); if
the broker cannot say, the erase answers 503 and removes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo.core.failures import describe
from mnemo.core.records import RunRecord
from mnemo.core.transport import Backlog, TransportUnavailable
from mnemo.domain.idempotency import IdempotencyClaim, KeyTaken
from mnemo.kafka.backlog import KafkaBacklog, consumers
from mnemo.kafka.channels import channel_names, ensure_channels
from mnemo.kafka.events.codec import encode
from mnemo.kafka.events.raw import RawEvent
from mnemo.kafka.installation import HEADER as INSTALLATION_HEADER
from mnemo.kafka.installation import claim_for_gateway
from mnemo.kafka.lag import LagMonitor, stage_groups
from mnemo.kafka.producer import IDEMPOTENT, SEQUENCE_ERRORS
from mnemo.kafka.reader import partitions
from mnemo.settings import SERVICES, KafkaSettings
from mnemo.store import idempotency as idempotency_store
from mnemo.store import runs
from mnemo.tracing import spans

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
        recalled=record.recalled,
        origin="gateway",
    )


class KafkaTransport:
    # The stage services are this transport's pipeline workers.
    worker_roles: tuple[str, ...] = SERVICES

    def __init__(
        self,
        ks: KafkaSettings,
        db: AsyncEngine,
        producer_factory: Callable[[], AIOKafkaProducer] | None = None,
    ) -> None:
        self.ks = ks
        self.db = db
        self.raw_topic = channel_names(ks).raw
        self.broker: str | None = f"kafka {ks.bootstrap_servers}"
        self._new_producer = producer_factory or self._real_producer
        self._producer: AIOKafkaProducer | None = None
        self._producer_lock = asyncio.Lock()
        # Why the last add was refused, until an add is acknowledged again.
        self.installation_id: str | None = None  # set by `start`
        self.refusing: str | None = None
        self._refused_at = float("-inf")
        self.producer_restarts = 0
        self._stopped = False  # by `stop`: no add is published after it, none restarts it
        self._lag = LagMonitor(ks.bootstrap_servers, stage_groups(ks))
        self._lag_task: asyncio.Task[None] | None = None
        self._backlog = KafkaBacklog(ks.bootstrap_servers, consumers(ks))

    async def start(self) -> None:
        """Connect the producer (the channels' topics are created if missing) and start
        measuring every stage's consumer lag (`mnemo.kafka.lag`)."""
        await ensure_channels(self.ks)
        # The database is this installation's, for these topics (mnemo.kafka.installation).
        self.installation_id = await claim_for_gateway(self.db, self.ks)
        await self.start_producer()
        self._lag_task = asyncio.create_task(self._lag.run(self.ks.lag_interval_seconds))

    def _real_producer(self) -> AIOKafkaProducer:
        return AIOKafkaProducer(
            bootstrap_servers=self.ks.bootstrap_servers,
            **IDEMPOTENT,
            request_timeout_ms=int(self.ks.produce_timeout_seconds * 1000),
        )

    async def start_producer(self) -> None:
        producer = self._new_producer()
        await producer.start()
        self._producer = producer

    async def _replace_producer(self, broken: AIOKafkaProducer, exc: BaseException) -> None:
        """A new producer for one the broker refuses (only once per broken producer: the
        adds failing together share the replacement)."""
        stop = broken.stop
        async with self._producer_lock:
            if self._producer is not broken:
                return
            log.warning("the Kafka producer is refused (%s); starting a new one",
                        describe(exc, 200))  # fmt: skip
            self._producer = None
            self.producer_restarts += 1
            try:
                await self.start_producer()
            finally:
                stopping = asyncio.ensure_future(stop())  # its batches may wait long
                stopping.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def check(self) -> str | None:
        """None when a broker answers a metadata request within a few seconds and the
        last add was not refused by the broker."""
        if self._producer is None:
            return "the Kafka producer is not running"
        # A refusal long ago is not news: with no adds (a balancer that took this gateway
        # out), readiness must be able to come back; the next refused add says it again.
        recent = time.monotonic() - self._refused_at < max(
            30.0, 2 * self.ks.produce_timeout_seconds
        )
        if self.refusing is not None and recent:
            return f"adds are refused: {self.refusing}"
        try:
            async with asyncio.timeout(BROKER_CHECK_SECONDS):
                await self._producer.client.fetch_all_metadata()
        except Exception as exc:
            return f"broker unreachable ({describe(exc, 200)})"
        return None

    def lag_problem(self) -> str | None:
        """Why the exported consumer lag is not current (an advisory readiness check)."""
        return self._lag.stale()

    async def backlog(self) -> list[Backlog]:
        """Per consumed channel: records its stage has not consumed, and the oldest's age."""
        return await self._backlog.measure()

    async def stop(self) -> None:
        self._stopped = True
        if self._lag_task is not None:
            self._lag_task.cancel()
            await asyncio.gather(self._lag_task, return_exceptions=True)
            self._lag_task = None
            await self._lag.close()
        await self._backlog.close()
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None

    async def submit(self, record: RunRecord, idempotency: IdempotencyClaim | None = None) -> None:
        async with self.db.begin() as tx:
            if idempotency is not None and not await idempotency_store.claim(tx, [idempotency]):
                raise KeyTaken(idempotency)
            await runs.create(tx, [record.to_row()])
        try:
            await self._produce(record)
        except Exception as exc:
            log.warning("add %s not acknowledged by the broker: %r", record.run_id, exc)
            try:
                async with self.db.begin() as tx:
                    refused = await runs.refuse(tx, record.run_id)
                    if refused and idempotency is not None:
                        await idempotency_store.release(tx, idempotency)
            except Exception as db_exc:  # the database is gone too: the outcome is unknown
                raise TransportUnavailable(
                    f"the event bus did not acknowledge the add and its refusal could not be "
                    f"recorded ({db_exc.__class__.__name__}); run '{record.run_id}' may still "
                    "be processed: check GET /v1/runs/{run_id} before adding it again"
                ) from exc
            if refused:
                raise TransportUnavailable(
                    "the event bus is unavailable; nothing was stored"
                ) from exc
            log.info("add %s reached the pipeline after all", record.run_id)

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
        """Publish and wait for the acknowledgement, `produce_timeout_seconds` at most. The
        wait ends on time even if the producer is slow to give the send up (`wait_for`
        would wait for the cancellation to finish); the refusal covers a late delivery."""
        if self._stopped:
            raise ConnectionError("the Kafka transport is stopped")
        producer = self._producer or await self._restart_producer()
        try:
            await self._send(producer, record)
        except SEQUENCE_ERRORS as exc:
            self._refuse(f"the broker refused the producer ({exc.__class__.__name__})")
            with contextlib.suppress(Exception):  # the next add tries again
                await self._replace_producer(producer, exc)
            raise
        except Exception as exc:
            self._refuse(f"the broker did not acknowledge an add ({describe(exc, 200)})")
            raise
        self.refusing = None

    def _refuse(self, reason: str) -> None:
        self.refusing = reason
        self._refused_at = time.monotonic()

    async def _restart_producer(self) -> AIOKafkaProducer:
        """A producer for an add after a replacement that could not start (broker down)."""
        async with self._producer_lock:
            if self._producer is None:
                try:
                    async with asyncio.timeout(self.ks.produce_timeout_seconds):
                        await self.start_producer()
                except Exception as exc:
                    self._refuse(f"the Kafka producer could not start ({describe(exc, 200)})")
                    raise ConnectionError("the Kafka producer is not running") from exc
            assert self._producer is not None
            return self._producer

    def _headers(self, record: RunRecord) -> list[tuple[str, bytes]]:
        """The run's trace, and the installation the stages check it against."""
        headers = spans.to_headers(record.trace)
        if self.installation_id is not None:
            headers.append((INSTALLATION_HEADER, self.installation_id.encode()))
        return headers

    async def _send(self, producer: AIOKafkaProducer, record: RunRecord) -> None:
        send = asyncio.ensure_future(
            producer.send_and_wait(
                self.raw_topic,
                encode(raw_event(record)),
                key=record.scope_key.encode(),
                headers=self._headers(record),
            )
        )
        done, _ = await asyncio.wait({send}, timeout=self.ks.produce_timeout_seconds)
        if not done:
            send.cancel()
            send.add_done_callback(lambda t: t.cancelled() or t.exception())
            raise TimeoutError(
                f"the broker did not acknowledge within {self.ks.produce_timeout_seconds:g} s"
            )
        send.result()
