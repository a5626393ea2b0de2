"""One frozen settings object, read from the environment once, by an entry point.

`Settings()` is built by the entry points only (the CLI commands, `services/*`, the
gateway, `python -m mnemo.embedded`, test and bench harnesses) and passed down. Environment
variables are `MNEMO_` plus the field name (`MNEMO_LLM_MODEL`); the Kafka section's are
`MNEMO_KAFKA_` plus its field name (`MNEMO_KAFKA_BOOTSTRAP_SERVERS`). An unknown `MNEMO_*`
variable is refused (a typo would otherwise be ignored silently), except the ones in
`CLIENT_VARIABLES`, which clients and scripts read.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from mnemo.domain.limits import InputLimits
from mnemo.domain.templates import TEMPLATE_NAMES
from mnemo.errors import MnemoError

PREFIX = "MNEMO_"
# Read by clients and scripts, not by the server: the CLI's remote commands (MNEMO_URL,
# MNEMO_API_KEY), scripts/run-distributed.sh (MNEMO_LOG_DIR, MNEMO_METRICS_BASE_PORT) and the
# console's browser tests (MNEMO_TEST_CHROMIUM, MNEMO_TEST_CHROMEDRIVER,
# MNEMO_SCREENSHOT_SPREAD_MINUTES from scripts/console-screenshots.sh).
CLIENT_VARIABLES = frozenset(
    {
        "MNEMO_URL",
        "MNEMO_API_KEY",
        "MNEMO_LOG_DIR",
        "MNEMO_METRICS_BASE_PORT",
        "MNEMO_TEST_CHROMIUM",
        "MNEMO_TEST_CHROMEDRIVER",
        "MNEMO_SCREENSHOT_SPREAD_MINUTES",
    }
)
SERVICES = ("extractor", "buffer", "transformer", "committer")


def _default_data_dir() -> Path:
    """~/.local/share/mnemo; as root /var/lib/mnemo (unless the former already holds data),
    because the embedded Postgres then runs as another user, which must be able to reach
    the folder, and a root home is private."""
    home = Path.home() / ".local" / "share" / "mnemo"
    if hasattr(os, "geteuid") and os.geteuid() == 0 and not (home / "pg").exists():
        return Path("/var/lib/mnemo")
    return home


def default_worker_processes() -> int:
    return min(2, os.cpu_count() or 1)


def _https_or_loopback(url: str) -> bool:
    parts = urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    scheme_ok = parts.scheme == "https" or (parts.scheme == "http" and loopback)
    return scheme_ok and bool(parts.hostname) and not parts.query and not parts.fragment


class OAuthSettings(BaseModel):
    """OAuth 2.1 on `/mcp` and the REST API (`MNEMO_OAUTH_*`, issue 40). Off unless
    `resource` is set together with an external `issuer` or the `builtin` server. API keys
    keep working beside tokens either way."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # The URL clients reach the MCP endpoint at, e.g. https://mnemo.example.com/mcp: the
    # RFC 8707 resource tokens must be issued for (their `aud`), and the `resource` of the
    # Protected Resource Metadata (RFC 9728) served under /.well-known/.
    resource: str | None = None
    # An external authorization server (an OIDC issuer): its tokens are JWTs checked
    # against its JWKS, with `iss` = issuer and `aud` = resource.
    issuer: str | None = None
    # The issuer's JWKS; unset: the `jwks_uri` of its /.well-known/openid-configuration.
    jwks_url: str | None = None
    # The project an external issuer's tokens act on (its tokens carry no project).
    project: str = "default"
    # A claim naming the user_id a token is bound to (e.g. `sub`); unset: not bound.
    user_claim: str | None = None
    # The built-in authorization server for self-hosters (issuer: the resource's origin):
    # dynamic registration, authorization code with PKCE (S256), a consent page.
    builtin: bool = False
    # Lifetime of the built-in server's access tokens (clients refresh them).
    access_token_seconds: int = Field(default=3600, ge=60, le=86_400)
    # Lifetime of its refresh tokens; each refresh rotates the token.
    refresh_token_seconds: int = Field(default=30 * 86_400, ge=3600)

    @model_validator(mode="after")
    def _consistent(self) -> OAuthSettings:
        if (self.issuer or self.builtin) and not self.resource:
            raise ValueError(
                "MNEMO_OAUTH_RESOURCE is required with MNEMO_OAUTH_ISSUER or MNEMO_OAUTH_BUILTIN "
                "(the URL clients reach /mcp at, e.g. https://mnemo.example.com/mcp)"
            )
        if self.resource and not (self.issuer or self.builtin):
            raise ValueError("MNEMO_OAUTH_RESOURCE needs MNEMO_OAUTH_ISSUER or MNEMO_OAUTH_BUILTIN")
        for name, url in (("RESOURCE", self.resource), ("ISSUER", self.issuer)):
            if url and not _https_or_loopback(url):
                raise ValueError(
                    f"MNEMO_OAUTH_{name} must be an https:// URL (http:// only on 127.0.0.1 "
                    f"or localhost), without a query or fragment; got {url!r}"
                )
        return self

    @property
    def enabled(self) -> bool:
        return self.resource is not None


class KafkaSettings(BaseModel):
    """The distributed mode: broker, topics and consumer groups (`MNEMO_KAFKA_*`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bootstrap_servers: str = "127.0.0.1:9092"
    # faust's local state folder (tables live in memory and recover from changelogs, so
    # little lands here); faust's default would litter the working directory.
    state_dir: Path = Field(default_factory=lambda: Path(tempfile.gettempdir()) / "mnemo-faust")
    # Topics are named `{prefix}.{kind}.{version}`, e.g. `mnemo.raw.v1`.
    topic_prefix: str = Field(default="mnemo", pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-\.]*$")
    topic_version: str = Field(default="v1", pattern=r"^v[0-9]+$")
    # Every keyed pipeline topic has this many partitions (co-partitioned by scope key).
    partitions: int = Field(default=4, ge=1, le=1024)
    dlq_partitions: int = Field(default=1, ge=1, le=64)
    # On a 3-broker cluster: 3 and 2, so one broker may be down and every acknowledged write
    # is still on two. A stage refuses to start on topics replicated below these.
    replication_factor: int = Field(
        default=1, ge=1, le=5,
        description="Replicas of every topic mnemo creates; a stage refuses to start on "
        "topics with fewer.",
    )  # fmt: skip
    min_insync_replicas: int = Field(
        default=1, ge=1, le=5,
        description="min.insync.replicas of the topics mnemo creates: replicas that must "
        "have a record before the broker acknowledges it (acks=all).",
    )  # fmt: skip
    # The raw topic is the retained log that `mnemo replay` re-runs: -1 keeps it forever.
    # It holds every add's text until then, erased users' included (see the README).
    raw_retention_ms: int = Field(default=-1, ge=-1)
    # The DLQ keeps failed records (payloads included) this long; -1: until deleted.
    dlq_retention_ms: int = Field(default=-1, ge=-1)
    # The inter-stage channels (extracted, batches, drafts, run-status): 7 days, as Kafka's
    # default. They carry extracted text while it is in flight.
    pipeline_retention_ms: int = Field(default=604_800_000, ge=-1)
    # Compacted table changelogs (buffers, sliding windows): the longest a replaced value,
    # e.g. a buffer state before an erase removed a user's items, may stay in the log.
    changelog_max_compaction_lag_ms: int = Field(default=86_400_000, ge=1)
    dlq_enabled: bool = True
    # Consumer group (= faust app id) per service; empty means `{prefix}-{service}`.
    group_extractor: str = ""
    group_buffer: str = ""
    group_transformer: str = ""
    group_committer: str = ""
    # Records a stage service runs at once per consumed channel: different scope keys run
    # concurrently inside a partition, each key strictly in order.
    concurrency: int = Field(default=32, ge=1, le=1024)
    # How long an add waits for the broker's acknowledgement before answering 503.
    produce_timeout_seconds: float = Field(default=15.0, gt=0)
    session_timeout_seconds: float = Field(default=10.0, ge=6)
    buffer_tick_seconds: float = Field(default=1.0, gt=0)
    lag_interval_seconds: float = Field(default=5.0, gt=0)
    # A stage whose table recovery reads nothing for this long exits, so that its
    # supervisor restarts it (mnemo.kafka.watchdog says why).
    recovery_stall_seconds: float = Field(default=60.0, gt=0)

    @model_validator(mode="after")
    def _insync_within_replicas(self) -> KafkaSettings:
        if self.min_insync_replicas > self.replication_factor:
            raise ValueError(
                f"MNEMO_KAFKA_MIN_INSYNC_REPLICAS ({self.min_insync_replicas}) exceeds "
                f"MNEMO_KAFKA_REPLICATION_FACTOR ({self.replication_factor}): no write "
                "could ever be acknowledged"
            )
        return self

    def group_id(self, service: str) -> str:
        """The consumer group (and faust app id) of `service`."""
        if service not in SERVICES:
            raise ValueError(f"unknown service {service!r}")
        explicit: str = getattr(self, f"group_{service}")
        return explicit or f"{self.topic_prefix}-{service}"

    @property
    def broker_url(self) -> str:
        """The faust broker URL(s), e.g. `kafka://127.0.0.1:9092`."""
        hosts = [h.strip() for h in self.bootstrap_servers.split(",") if h.strip()]
        return ";".join(f"kafka://{h}" for h in hosts)


class Settings(BaseSettings):
    """Every knob of mnemo. Env vars are prefixed `MNEMO_` (e.g. `MNEMO_LLM_MODEL`)."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX,
        env_nested_delimiter="_",
        env_nested_max_split=1,
        frozen=True,
        extra="ignore",
    )

    def __init__(self, **values: Any) -> None:
        refuse_unknown_variables(os.environ)
        super().__init__(**values)

    # Storage. Without a database URL mnemo starts an embedded Postgres in `data_dir`.
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("MNEMO_DATABASE_URL", "DATABASE_URL")
    )
    data_dir: Path = Field(default_factory=_default_data_dir)
    db_pool_size: int = Field(default=20, ge=2, le=200)
    # A full or frozen database costs a request seconds, not forever (docs/guides/failures.md).
    db_connect_timeout_seconds: float = Field(
        default=5.0, gt=0, description="Give up opening a database connection after this long."
    )
    db_statement_timeout_seconds: float = Field(
        default=300.0,
        ge=0,
        description="Postgres cancels a statement of mnemo's pool that runs longer (0: never).",
    )
    add_timeout_seconds: float = Field(
        default=15.0,
        gt=0,
        description="An add not recorded within this long answers 503 with Retry-After "
        "(send an Idempotency-Key to retry it safely).",
    )

    project: str = "default"
    # The template a project's `default` group is created from on first use (unset: the
    # `default` template). An existing default group is kept. `engram_quickstart` fits
    # Weaviate's Engram agent plugins.
    default_template: str | None = None
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
    # For `openai`: put in front of search queries / of every other text, for models trained
    # with such instructions (nomic-embed-text: "search_query: " / "search_document: ").
    embedding_query_prefix: str = Field(default="", max_length=200)
    embedding_document_prefix: str = Field(default="", max_length=200)

    # Pipeline execution.
    workers: int = Field(default=16, ge=1, le=512)
    # `mnemo serve`: pipeline workers in this many separate processes beside the server
    # (0: inside the server process), so acknowledgements stay off the pipeline's CPU.
    # Default: one per core, at most two (bench: 32.5 against 27.8 runs/s on 2 cores; each
    # process holds its own model session, ~100 MB with the ONNX embedder).
    worker_processes: int = Field(default_factory=lambda: default_worker_processes(), ge=0, le=32)
    # Set by `mnemo serve --worker-processes` for each worker process: the file it creates
    # once it is ready to take records (model loaded, database reachable).
    worker_ready_file: Path | None = None
    # ... and the server's pid: a worker process stops when that process is gone.
    worker_parent_pid: int | None = None
    # Niceness added by worker processes (0 to 19): the server process answers first.
    worker_nice: int = Field(default=10, ge=0, le=19)
    bus_poll_seconds: float = Field(default=0.2, gt=0)
    buffer_tick_seconds: float = Field(default=1.0, gt=0)
    # How often raw inputs past their group's retention are redacted (the embedded ticker;
    # the committer service in the distributed mode).
    retention_sweep_seconds: float = Field(default=60.0, gt=0)
    # The gateway samples its own metrics this often into an hour-long ring buffer, so the
    # console's pipeline-health charts show the last hour at once.
    console_sample_seconds: float = Field(default=10.0, ge=1, le=300)
    # Each pass of a run through its pipeline (from its add or a buffer flush, to its commit
    # or its next buffer) must end within this; past it the run fails, retryable.
    run_time_budget_seconds: float = Field(default=300.0, gt=0)
    # Pipeline workers (and stage services) record a heartbeat in the database this often;
    # /readyz counts a worker alive while its last heartbeat is younger than the timeout.
    heartbeat_seconds: float = Field(default=2.0, gt=0)
    heartbeat_timeout_seconds: float = Field(default=20.0, gt=0)
    worker_stall_seconds: float = Field(
        default=60.0,
        gt=0,
        description="A worker process of `mnemo serve` that showed no sign of life or progress "
        "for this long is hung (stopped, deadlocked, stuck past its run's time budget): the "
        "server kills and replaces it. /readyz names a worker silent for longer than "
        "MNEMO_HEARTBEAT_TIMEOUT_SECONDS meanwhile.",
    )

    # Load shedding. Adds over a project's rate or open-run quota get 429, adds beyond the
    # server's queue 503, both with Retry-After. 0 turns a limit off. The defaults are far
    # above what an agent does (a few adds a minute, a handful of open runs) and stop one
    # runaway project from filling the server's queue alone (docs/guides/hardening.md).
    project_adds_per_second: float = Field(default=100.0, ge=0)
    project_add_burst: int = Field(default=1000, ge=1)
    project_max_open_runs: int = Field(default=10_000, ge=0)
    max_open_runs: int = Field(default=100_000, ge=0)
    # Adds waiting in memory for the next group commit, and HTTP requests in progress.
    max_queued_adds: int = Field(default=10_000, ge=1)
    max_inflight_requests: int = Field(default=1024, ge=1)
    # How long an add's Idempotency-Key names that add in its project: a repeat within the
    # window returns the first add's run (24 h).
    idempotency_window_seconds: float = Field(default=86_400.0, gt=0)
    # transform_with_context calls the LLM only when a related memory is at least this
    # similar (cosine) to a new one; a step's `min_similarity` overrides it. 0.6 keeps
    # "works as an engineer" / "promoted to CEO" (0.67 with the local model) and skips
    # unrelated texts (bananas / Berlin 0.44); bge-small rates any two facts about a user
    # 0.6-0.75, so it spares calls between topics more than within them.
    reconcile_min_similarity: float = Field(default=0.6, ge=-1, le=1)
    # extract -> transform_with_context -> commit: one LLM call (prompt extract_reconcile)
    # extracts and reconciles when the committed memories close to the input fit this many
    # characters of prompt; 0 keeps the two calls. The offline heuristics always take two.
    extract_reconcile_max_chars: int = Field(
        default=6000,
        ge=0,
        description="Longest prompt (characters) of the combined extract-and-reconcile call; "
        "when the memories close to an add do not fit, extract and reconcile are two calls. "
        "0 always makes two calls.",
    )
    # Guards on destructive model output (core/answer_guards.py): a reconcile or
    # reconsolidate answer that deletes more than this share of the memories it was shown
    # (3 at least) fails the run, retryably, and writes nothing.
    destructive_max_share: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Largest share of the memories shown to a reconcile or reconsolidate "
        "call that one answer may delete (at least 3 deletes); above it the run fails and "
        "nothing is written.",
    )
    # How often the pipeline looks for consolidation scopes whose idle or interval trigger
    # is due (count triggers fire at commit).
    consolidation_tick_seconds: float = Field(default=30.0, gt=0)
    # Retries of a transient failure (core.backoff), the same in both modes: the embedded
    # workers and the stage services wait this long first, doubling up to the cap.
    transient_backoff_seconds: float = Field(
        default=1.0,
        gt=0,
        description="First wait before retrying work whose Postgres or Kafka broker is "
        "unavailable; each further wait doubles, up to transient_backoff_cap_seconds.",
    )
    transient_backoff_cap_seconds: float = Field(
        default=5.0,
        gt=0,
        description="Longest wait between retries of work during an outage of Postgres or "
        "the broker (both modes), so that work resumes soon after the outage ends.",
    )

    # Recall tracking: every search records the ids it returned (off the hot path: a
    # bounded in-process queue, written in batches; when full, the oldest entry is dropped).
    recall_tracking: bool = True
    recall_queue_size: int = Field(default=10_000, ge=10, le=1_000_000)
    recall_flush_seconds: float = Field(default=0.5, gt=0, le=60)
    # Recalls older than this are pruned; keep it above every group's labile window.
    recall_retention_seconds: float = Field(default=86_400.0, ge=60)

    # HTTP.
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    max_body_bytes: int = Field(default=1_000_000, ge=1024)
    # Slow and keyless clients (docs/guides/hardening.md). A request head must arrive
    # within the header timeout of its first byte (or of the connection), its body within
    # the body timeout of the head; past them the connection is closed (408).
    header_timeout_seconds: float = Field(default=10.0, gt=0)
    body_timeout_seconds: float = Field(default=30.0, gt=0)
    # Connections still sending their request head; past this many the one waiting
    # longest is closed, so slow clients cannot hold the server's connections.
    max_unauthenticated_connections: int = Field(default=256, ge=1)
    # Long-lived requests (GET /mcp event streams, run waits) at once, per API key and in
    # all; they do not count against max_inflight_requests. An event stream that carries
    # nothing for stream_idle_seconds is ended.
    streams_per_key: int = Field(default=32, ge=1)
    max_streams: int = Field(default=512, ge=1)
    stream_idle_seconds: float = Field(default=60.0, gt=0)
    auth_disabled: bool = False
    # What one request may ask for (`MNEMO_LIMITS_*`, see `mnemo.domain.limits`).
    limits: InputLimits = Field(default_factory=InputLimits)

    # Search.
    # HNSW candidate list per query. At 100k memories with many near-duplicates (bench
    # section 3) 80 gave recall@10 ~0.6-0.8, 200 0.94-0.97 across builds, 400 0.985 (by
    # distance) for 1.5 ms more per HNSW query than 200.
    hnsw_ef_search: int = Field(default=400, ge=10, le=1000)
    # Hybrid search: weight of the vector list's z-scores (1 - alpha goes to bm25's); each
    # query's own score spreads set the scale (store.search.fuse). 0.65 with the local model:
    # 0.65-0.70 put hybrid above both lists on both dev sets (README, Retrieval quality).
    hybrid_alpha: float = Field(default=0.65, ge=0, le=1)
    # Recall signals (core.recall_signals), each in standard deviations of a search's pool
    # of candidates, in every retrieval mode; 0 turns one off. Measured on both dev sets
    # (docs/benchmarks.md, Retrieval quality).
    recall_time_weight: float = Field(
        default=1.0,
        ge=0,
        le=5,
        description="Lift for a memory whose event time falls in a window the query names "
        "('in May 2023', 'last year').",
    )
    recall_names_weight: float = Field(
        default=0.0,
        ge=0,
        le=5,
        description="Lift for a memory whose subject, speaker or a property value is a name "
        "the query mentions.",
    )
    # Measured on LoCoMo dev and BEAM-128K (docs/benchmarks.md, "Recall signals").
    recall_context_weight: float = Field(
        default=0.5,
        ge=0,
        le=5,
        description="Share of the gap to the better neighbour's z-score (the memories "
        "written just before and after by the same run) that a memory closes when that "
        "neighbour matches the query better than it does.",
    )

    # Distributed mode (Kafka stage services and the gateway in front of them).
    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    # OAuth 2.1 for MCP clients (`MNEMO_OAUTH_*`, see OAuthSettings).
    oauth: OAuthSettings = Field(default_factory=OAuthSettings)
    # Prometheus /metrics of a stage service (faust's web server); 0 disables it.
    metrics_port: int = Field(default=0, ge=0, le=65535)
    metrics_host: str = "127.0.0.1"

    @field_validator("default_template")
    @classmethod
    def _known_template(cls, name: str | None) -> str | None:
        if name is not None and name not in TEMPLATE_NAMES:
            raise ValueError(f"unknown template '{name}'; known: {', '.join(TEMPLATE_NAMES)}")
        return name

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.heartbeat_timeout_seconds <= self.heartbeat_seconds:
            raise ValueError(
                "MNEMO_HEARTBEAT_TIMEOUT_SECONDS must be longer than MNEMO_HEARTBEAT_SECONDS"
            )
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


# Nested sections: `MNEMO_<SECTION>_<FIELD>`.
SECTIONS: dict[str, type[BaseModel]] = {
    "kafka": KafkaSettings,
    "limits": InputLimits,
    "oauth": OAuthSettings,
}


def known_variables() -> frozenset[str]:
    """Every `MNEMO_*` variable a Settings field reads."""
    names = {f"{PREFIX}{name.upper()}" for name in Settings.model_fields if name not in SECTIONS}
    for section, model in SECTIONS.items():
        names |= {f"{PREFIX}{section.upper()}_{name.upper()}" for name in model.model_fields}
    return frozenset(names)


class UnknownVariables(MnemoError, ValueError):
    """`MNEMO_*` variables that nothing reads (a typo would otherwise be ignored silently);
    the message is one line, naming each and the closest known name."""


def refuse_unknown_variables(environ: Any) -> None:
    """Raise UnknownVariables naming every `MNEMO_*` variable that nothing reads."""
    known = known_variables() | CLIENT_VARIABLES
    unknown = sorted(k for k in environ if k.upper().startswith(PREFIX) and k.upper() not in known)
    if not unknown:
        return
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name.upper(), sorted(known), n=1)
        hints.append(f"{name} (did you mean {close[0]}?)" if close else name)
    raise UnknownVariables(
        "unknown MNEMO_* environment variable(s): " + ", ".join(hints) + ". "
        "Unset them; docs/reference/configuration.md lists the known ones."
    )
