"""The faust app every stage service is built on: broker, store, timeouts, /metrics, lag."""

from __future__ import annotations

import logging

import faust
from prometheus_client import generate_latest

from mnemo.kafka.lag import LagMonitor
from mnemo.settings import KafkaSettings, Settings

log = logging.getLogger(__name__)


def json_schema() -> faust.Schema:
    """Table keys as UTF-8 strings, values as JSON documents."""
    return faust.Schema(key_serializer="raw", value_serializer="json")


def changelog_configs(ks: KafkaSettings) -> dict[str, str]:
    """Topic configs of table changelogs: a replaced or deleted value (e.g. a buffer's state
    before an erase removed a user's items) is compacted away within this bound."""
    lag = str(ks.changelog_max_compaction_lag_ms)
    return {"max.compaction.lag.ms": lag, "segment.ms": lag}


def make_app(service: str, settings: Settings, source_topics: list[str]) -> faust.App:
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
        table_standby_replicas=0,
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=ks.session_timeout_seconds,
        broker_heartbeat_interval=min(3.0, ks.session_timeout_seconds / 4),
        broker_commit_interval=1.0,
        producer_acks=-1,
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

    monitor = LagMonitor(ks.bootstrap_servers, ks.group_id(service), source_topics)

    @app.timer(ks.lag_interval_seconds)
    async def measure_lag() -> None:
        try:
            await monitor.measure()
        except Exception as exc:  # the lag gauge is best effort; the pipeline goes on
            log.warning("%s: consumer lag not measured (%s)", service, exc)
            await monitor.close()

    return app
