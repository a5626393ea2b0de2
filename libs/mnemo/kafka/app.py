"""The faust app every stage service is built on: broker, store, timeouts, /metrics, /healthz.

Consumer lag is not measured here: each replica would export every partition's lag (sums
double with two replicas) and the series would vanish with the consumer. The gateway
measures every group's lag from the broker (`mnemo.kafka.lag`).
"""

from __future__ import annotations

import json
import logging

import faust
from prometheus_client import generate_latest

from mnemo.settings import Settings

log = logging.getLogger(__name__)
METADATA_MAX_AGE_MS = 10_000  # one small request per consumer every 10 s


def json_schema() -> faust.Schema:
    """Table keys as UTF-8 strings, values as JSON documents."""
    return faust.Schema(key_serializer="raw", value_serializer="json")


def make_app(service: str, settings: Settings) -> faust.App:
    """A faust app whose id is the service's consumer group; tables recover from changelogs."""
    ks = settings.kafka
    ks.state_dir.mkdir(parents=True, exist_ok=True)  # faust makes only the last level
    app = faust.App(
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
