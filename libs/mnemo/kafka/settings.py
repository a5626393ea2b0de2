"""Settings of the distributed mode (Kafka), read from `MNEMO_*` env vars when constructed."""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

SERVICES = ("extractor", "buffer", "transformer", "committer")


class KafkaSettings(BaseSettings):
    """Broker, topics and consumer groups of the stage services. Nothing is read at import."""

    model_config = SettingsConfigDict(env_prefix="MNEMO_", frozen=True, extra="ignore")

    kafka_bootstrap_servers: str = "127.0.0.1:9092"
    # faust's local state folder (tables live in memory and recover from changelogs, so
    # little lands here); faust's default would litter the working directory.
    kafka_state_dir: Path = Field(
        default_factory=lambda: Path(tempfile.gettempdir()) / "mnemo-faust"
    )
    # Topics are named `{prefix}.{kind}.{version}`, e.g. `mnemo.raw.v1`.
    kafka_topic_prefix: str = Field(default="mnemo", pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-\.]*$")
    kafka_topic_version: str = Field(default="v1", pattern=r"^v[0-9]+$")
    # Every keyed pipeline topic has this many partitions (co-partitioned by scope key).
    kafka_partitions: int = Field(default=4, ge=1, le=1024)
    kafka_dlq_partitions: int = Field(default=1, ge=1, le=64)
    kafka_replication_factor: int = Field(default=1, ge=1, le=5)
    # The raw topic is the retained log that `mnemo replay` re-runs: -1 keeps it forever.
    kafka_raw_retention_ms: int = -1
    kafka_dlq_enabled: bool = True
    # Consumer group (= faust app id) per service; empty means `{prefix}-{service}`.
    kafka_group_extractor: str = ""
    kafka_group_buffer: str = ""
    kafka_group_transformer: str = ""
    kafka_group_committer: str = ""
    # How long an add waits for the broker's acknowledgement before answering 503.
    kafka_produce_timeout_seconds: float = Field(default=15.0, gt=0)
    kafka_session_timeout_seconds: float = Field(default=10.0, ge=6)
    kafka_buffer_tick_seconds: float = Field(default=1.0, gt=0)
    kafka_lag_interval_seconds: float = Field(default=5.0, gt=0)
    # Prometheus /metrics of a stage service (faust's web server); 0 disables it.
    metrics_port: int = Field(default=0, ge=0, le=65535)
    metrics_host: str = "127.0.0.1"
    # Extra in-process retries of a record whose Postgres or broker is briefly unavailable.
    kafka_transient_backoff_seconds: float = Field(default=1.0, gt=0)

    def group_id(self, service: str) -> str:
        """The consumer group (and faust app id) of `service`."""
        if service not in SERVICES:
            raise ValueError(f"unknown service {service!r}")
        explicit: str = getattr(self, f"kafka_group_{service}")
        return explicit or f"{self.kafka_topic_prefix}-{service}"

    @property
    def broker_url(self) -> str:
        """The faust broker URL(s), e.g. `kafka://127.0.0.1:9092`."""
        hosts = [h.strip() for h in self.kafka_bootstrap_servers.split(",") if h.strip()]
        return ";".join(f"kafka://{h}" for h in hosts)
