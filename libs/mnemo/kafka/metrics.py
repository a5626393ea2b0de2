"""Kafka-specific prometheus metrics (the shared ones are in `mnemo.metrics`)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

CONSUMER_LAG = Gauge(
    "mnemo_kafka_consumer_lag",
    "Records not yet consumed by a consumer group (the pipeline lag)",
    ["group", "topic", "partition"],
)
CONSUMER_LAG_AGE = Gauge(
    "mnemo_kafka_consumer_lag_age_seconds",
    "Seconds since mnemo_kafka_consumer_lag was last read from the broker (-1: never)",
)
CONSUMER_LAG_STALE = Gauge(
    "mnemo_kafka_consumer_lag_stale",
    "1 while the consumer lag cannot be read: mnemo_kafka_consumer_lag holds old values",
)
DLQ_RECORDS = Counter(
    "mnemo_dlq_records_total", "Records dead-lettered with their error", ["service", "reason"]
)
TRANSIENT_RETRIES = Counter(
    "mnemo_kafka_transient_retries_total",
    "Records retried in place because Postgres or the broker was unavailable",
    ["service"],
)
BUFFERED_RUNS = Gauge("mnemo_buffered_runs", "Runs waiting in buffer tables", ["service"])
