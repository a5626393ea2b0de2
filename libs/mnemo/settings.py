"""One frozen settings object, read from the environment once at start-up."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_data_dir() -> Path:
    return Path.home() / ".local" / "share" / "mnemo"


class Settings(BaseSettings):
    """Every knob of mnemo. Env vars are prefixed `MNEMO_` (e.g. `MNEMO_LLM_MODEL`)."""

    model_config = SettingsConfigDict(env_prefix="MNEMO_", frozen=True, extra="ignore")

    # Storage. Without a database URL mnemo starts an embedded Postgres in `data_dir`.
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("MNEMO_DATABASE_URL", "DATABASE_URL")
    )
    data_dir: Path = Field(default_factory=_default_data_dir)
    db_pool_size: int = Field(default=20, ge=2, le=200)

    project: str = "default"
    # embedded: workers in this process on the Postgres bus; distributed: adds go to Kafka
    # and the stage services in `services/` run the pipeline.
    mode: Literal["embedded", "distributed"] = "embedded"

    # LLM: any OpenAI-compatible server. Unset base URL and key select the offline provider.
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_model: str = "gpt-4o-mini"
    llm_timeout_seconds: float = Field(default=60.0, gt=0)
    llm_max_attempts: int = Field(default=4, ge=1, le=10)
    llm_structured_output: Literal["json_schema", "tools"] = "json_schema"

    # Embeddings: the local model ships in a package; "hash" is for unit tests only.
    embedding_provider: Literal["local", "openai", "hash"] = "local"
    embedding_model: str = "text-embedding-3-small"
    embedding_base_url: str | None = None
    embedding_api_key: SecretStr | None = None
    embedding_dim: int = Field(default=384, ge=8, le=4096)

    # Pipeline execution.
    workers: int = Field(default=16, ge=1, le=512)
    # `mnemo serve`: pipeline workers in this many separate processes beside the server
    # (0: inside the server process). One keeps acknowledgements off the pipeline's CPU.
    worker_processes: int = Field(default=1, ge=0, le=32)
    # Set by `mnemo serve --worker-processes` for each worker process: the file it creates
    # once it is ready to take records (model loaded, database reachable).
    worker_ready_file: Path | None = None
    # ... and the server's pid: a worker process stops when that process is gone.
    worker_parent_pid: int | None = None
    # Niceness added by worker processes (0 to 19): the server process answers first.
    worker_nice: int = Field(default=10, ge=0, le=19)
    bus_poll_seconds: float = Field(default=0.2, gt=0)
    buffer_tick_seconds: float = Field(default=1.0, gt=0)
    dedupe_threshold: float = Field(default=0.9, ge=0, le=1)

    # HTTP.
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    max_body_bytes: int = Field(default=1_000_000, ge=1024)
    auth_disabled: bool = False

    # Search.
    # HNSW candidate list per query. 80 gave recall@10 of ~0.6-0.8 at 100k memories with many
    # near-duplicates (bench section 3); 200 costs a few milliseconds more.
    hnsw_ef_search: int = Field(default=200, ge=10, le=1000)
    # Hybrid search weight of the vector list (1 - alpha goes to bm25).
    hybrid_alpha: float = Field(default=0.75, ge=0, le=1)

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.embedding_provider == "local" and self.embedding_dim != 384:
            raise ValueError(
                "the local embedding model has 384 dimensions; unset MNEMO_EMBEDDING_DIM"
            )
        if self.embedding_provider == "openai" and not (
            self.embedding_base_url or self.embedding_api_key or self.llm_api_key
        ):
            raise ValueError(
                "MNEMO_EMBEDDING_PROVIDER=openai needs MNEMO_EMBEDDING_BASE_URL or a key"
            )
        return self

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_base_url or self.llm_api_key)
