"""The faust app every stage service is built on: broker, store, timeouts, /metrics, /healthz.

The app's producer is idempotent with acks=all (`IdempotentProducer`, `mnemo.kafka.producer`).

Consumer lag is not measured here: each replica would export every partition's lag (sums
double with two replicas) and the series would vanish with the consumer. The gateway
measures every group's lag from the broker (`mnemo.kafka.lag`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import faust
from faust.transport.drivers.aiokafka import Producer as AIOKafkaProducer
from faust.types import ProducerT
from prometheus_client import generate_latest

from mnemo.kafka.producer import IDEMPOTENT, is_sequence_error
from mnemo.kafka.watchdog import leave
from mnemo.settings import Settings

log = logging.getLogger(__name__)
METADATA_MAX_AGE_MS = 10_000  # one small request per consumer every 10 s


def json_schema() -> faust.Schema:
    """Table keys as UTF-8 strings, values as JSON documents."""
    return faust.Schema(key_serializer="raw", value_serializer="json")


def leave_refused(app_id: str, exc: BaseException) -> None:
    """A stage's reaction to a producer the broker refuses: leave, so that the supervisor
    starts the stage again with a new producer (`mnemo.kafka.producer`). Nothing is lost:
    the record whose output failed is not acknowledged, so it is consumed again."""
    leave(
        f"{app_id}: the broker refused this stage's producer ({exc.__class__.__name__}); "
        "only a new producer gets past it"
    )


class IdempotentProducer(AIOKafkaProducer):
    """faust's aiokafka producer, idempotent with acks=all.

    faust-streaming 0.15.3 builds its aiokafka producer from its settings plus
    `_settings_extra`, which adds `enable_idempotence` only with
    `processing_guarantee="exactly_once"` (transactions, which the stages do not use: they
    acknowledge a record once its outputs are acknowledged). No setting passes it through,
    so this overrides that hook.

    Every send (records, table changelogs, ticks, the DLQ) is watched: a sequence error
    calls `on_refused` (by default `leave_refused`). Its callback is added before faust's
    own, so the stage leaves before the failure reaches the record's handler, which would
    otherwise dead-letter the record as poison."""

    on_refused: Callable[[str, BaseException], None] = staticmethod(leave_refused)

    def _settings_extra(self) -> Mapping[str, Any]:
        return {**super()._settings_extra(), **IDEMPOTENT}

    async def send(self, *args: Any, **kwargs: Any) -> Any:
        try:
            sent = await super().send(*args, **kwargs)
        except Exception as exc:  # refused before it was queued (a producer failed before)
            self.check(exc)
            raise
        if isinstance(sent, asyncio.Future):
            sent.add_done_callback(self._sent)
        return sent

    def _sent(self, fut: asyncio.Future[Any]) -> None:
        if not fut.cancelled():
            self.check(fut.exception())

    def check(self, exc: BaseException | None) -> None:
        if is_sequence_error(exc):
            assert exc is not None
            self.on_refused(self.app.conf.id, exc)


class StageApp(faust.App):
    """A faust app whose producer is an `IdempotentProducer`."""

    def _new_producer(self) -> ProducerT:
        return IdempotentProducer(self.transport, loop=self.loop, beacon=self.beacon)


def make_app(service: str, settings: Settings) -> faust.App:
    """A faust app whose id is the service's consumer group; tables recover from changelogs."""
    ks = settings.kafka
    ks.state_dir.mkdir(parents=True, exist_ok=True)  # faust makes only the last level
    app = StageApp(
        ks.group_id(service),
        broker=ks.broker_url,
        store="memory://",
        datadir=str(ks.state_dir / "{conf.name}-data"),
        topic_partitions=ks.partitions,
        topic_replication_factor=ks.replication_factor,
        topic_disable_leader=True,
        # ensure_channels creates every topic (channels and changelogs) before start.
        topic_allow_declare=False,
        table_standby_replicas=0,
        consumer_auto_offset_reset="earliest",
        # A group that re-forms while a restarted broker has not yet loaded its topics gets
        # an empty assignment; the group leader rebalances only once it refreshes metadata
        # and sees the partitions. Kafka's default (5 minutes) would leave runs waiting.
        consumer_metadata_max_age_ms=METADATA_MAX_AGE_MS,
        broker_session_timeout=ks.session_timeout_seconds,
        broker_heartbeat_interval=min(3.0, ks.session_timeout_seconds / 4),
        broker_commit_interval=1.0,
        producer_acks=-1,
        # Records produced within 5 ms share a request: less CPU per record for stage and
        # broker when busy, 5 ms more latency per hop when idle.
        producer_linger_ms=5,
        # Records a stage reads ahead (its agents hold up to 4x concurrency themselves).
        stream_buffer_maxsize=max(64, ks.concurrency * 4),
        web_enabled=settings.metrics_port > 0,
        web_port=settings.metrics_port or 6066,
        web_bind=settings.metrics_host,
        web_host=settings.metrics_host,
    )
    if settings.metrics_port > 0:

        @app.page("/metrics")
        async def metrics_page(
            web: faust.web.View, request: faust.web.Request
        ) -> faust.web.Response:
            return web.bytes(generate_latest(), content_type="text/plain")

        @app.page("/healthz")
        async def health_page(
            web: faust.web.View, request: faust.web.Request
        ) -> faust.web.Response:
            """200 once the worker is up: dependencies open (before it joined its group),
            group joined, tables recovered (faust serves pages only from then on)."""
            body = {
                "service": service,
                "group": ks.group_id(service),
                "partitions": len(app.consumer.assignment()),
                "rebalancing": bool(app.rebalancing),
            }
            return web.bytes(json.dumps(body).encode(), content_type="application/json")

    return app
