"""Table and index definitions used to build queries. Alembic migrations own the DDL; a test
(tests/integration/test_schema.py) checks that they build exactly this schema."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    DateTime,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Sequence,
    String,
    Table,
    Text,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR

from mnemo.store.vector_text import FastVector

metadata = MetaData()
# Okapi BM25's document length: English lexeme occurrences, stop words excluded
# (`mnemo_token_count` is created by migration 0010).
TOKEN_COUNT = "mnemo_token_count(to_tsvector('english', content))"

# Written once by the first migration: settings the stored data depends on.
settings_meta = Table(
    "settings_meta",
    metadata,
    Column("key", String, primary_key=True),
    Column("value", String, nullable=False),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String, primary_key=True),
    Column("project", String, nullable=False),
    Column("name", String, nullable=False),
    Column("key_hash", String, nullable=False, unique=True),
    Column("prefix", String, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
    Column("writable", Boolean, nullable=False, server_default="true"),
    Column("user_id", String),  # bound to one user (compared form); None: every user
)

oauth_clients = Table(
    "oauth_clients",
    metadata,
    Column("client_id", String, primary_key=True),
    Column("info", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# The built-in OAuth server's consents, codes and tokens, by SHA-256 of their secret.
oauth_tokens = Table(
    "oauth_tokens",
    metadata,
    Column("token_hash", String, primary_key=True),
    Column("kind", String, nullable=False),
    Column("client_id", String, nullable=False),
    Column("family", String, nullable=False),
    Column("project", String),
    Column("writable", Boolean, nullable=False, server_default="false"),
    Column("user_id", String),
    Column("scopes", ARRAY(String), nullable=False),
    Column("resource", String),
    Column("data", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("used_at", DateTime(timezone=True)),
    Index("oauth_tokens_family", "family"),
)

groups = Table(
    "groups",
    metadata,
    Column("project", String, primary_key=True),
    Column("name", String, primary_key=True),
    Column("config", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", String, primary_key=True),
    Column("project", String, nullable=False),
    Column("group", String, nullable=False),
    Column("input_type", String, nullable=False),
    Column("starting_step", Integer, nullable=False),
    Column("starting_step_id", String, nullable=False),
    Column("user_id", String),
    Column("properties", JSONB, nullable=False),
    Column("scope_key", String, nullable=False),
    Column("status", String, nullable=False),
    Column("error", Text),
    Column("raw_input", JSONB, nullable=False),
    Column("committed_operations", JSONB),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # Admission order, from the sequence erasures draw theirs from: a run admitted before an
    # erase of its user has a smaller number than the erase's tombstone.
    Column(
        "admitted_seq",
        BigInteger,
        nullable=False,
        server_default=text("nextval('run_admission_seq')"),
    ),
    # Why its content is gone (mnemo.domain.retention.Redaction), and when; NULL: intact.
    Column("redaction", String),
    Column("redacted_at", DateTime(timezone=True)),
    # When the pipeline took the run's queued record; NULL while only queued (Kafka mode:
    # the gateway may refuse the add until then; see migration 0010).
    Column("admitted_at", DateTime(timezone=True)),
    # The memory ids an add named as recalled (reconsolidation); NULL: it named none.
    Column("recalled", JSONB),
    # What produced its memories, set at commit: the model's name or "offline" (0015).
    Column("produced_by", String),
    Index("runs_project_user", "project", "user_id"),
    Index("runs_project_created", "project", "created_at", "run_id"),
    Index(
        "runs_unredacted_created",
        "project",
        "group",
        "created_at",
        postgresql_where=text("redaction IS NULL"),
    ),
    # Only the open runs: what the quotas count and /readyz's oldest running run reads.
    Index(
        "runs_open",
        "project",
        "created_at",
        postgresql_where=text("status IN ('running', 'in_buffer')"),
    ),
)

# Drawn by every new run row (admission) and by every erase (its tombstone's `seq`).
run_admission_seq = Sequence("run_admission_seq", metadata=metadata)

bus_records = Table(
    "bus_records",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("channel", String, nullable=False),
    Column("scope_key", String, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("bus_records_scope_id", "scope_key", "id"),
)

buffer_items = Table(
    "buffer_items",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("project", String, nullable=False),
    Column("group", String, nullable=False),
    Column("step_id", String, nullable=False),
    Column("scope_key", String, nullable=False),
    Column("run_id", String, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("buffer_items_scope", "project", "group", "step_id", "scope_key", "id"),
)

drafts = Table(
    "drafts",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("batch_id", String, nullable=False),
    Column("project", String, nullable=False),
    Column("group", String, nullable=False),
    Column("run_id", String, nullable=False),
    Column("candidate", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("drafts_batch", "batch_id"),
    Index("drafts_run", "run_id"),
)

applied_batches = Table(
    "applied_batches",
    metadata,
    Column("batch_id", String, primary_key=True),
    Column("applied_at", DateTime(timezone=True), nullable=False),
)

memories = Table(
    "memories",
    metadata,
    Column("id", String, primary_key=True),
    Column("project", String, nullable=False),
    Column("group", String, nullable=False),
    Column("topic", String, nullable=False),
    Column("user_id", String),
    Column("properties", JSONB, nullable=False),
    Column("content", Text, nullable=False),
    Column("embedding", FastVector(), nullable=False),
    Column("tsv", TSVECTOR, Computed("to_tsvector('english', content)", persisted=True)),
    Column("tsv_length", Integer, Computed(TOKEN_COUNT, persisted=True)),
    Column("status", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("run_ids", ARRAY(String), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # Event-time range of the evidence of the current content (domain/event_time.py).
    Column("event_time", DateTime(timezone=True), nullable=False),
    Column("event_time_end", DateTime(timezone=True), nullable=False),
    # The run that wrote the current state (None: a delete through the API) and how.
    Column("written_by_run_id", String),
    Column("operation", String, nullable=False),
    Index("memories_scope", "project", "group", "user_id", "topic", "status"),
    Index("memories_tsv", "tsv", postgresql_using="gin"),
    Index(
        "memories_embedding",
        "embedding",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    ),
    Index("memories_properties", "properties", postgresql_using="gin"),
    # Successor lookups walk it newest first (store.search.later_memories; migration 0021).
    Index(
        "memories_event_time_end",
        "project",
        "group",
        text("event_time_end DESC"),
        "id",
    ),
    # A memory's neighbours in its run (store.neighbours; migration 0022).
    Index("memories_run_order", "project", "group", text("(run_ids[1])"), "event_time", "id"),
)

# BM25 postings: one row per (searchable memory, English lexeme), kept by a trigger on
# `memories` (migration 0014) so that every write path keeps them exact. Keyword search reads
# only the query's lexemes of the filtered scope from `memory_terms_lookup` (an index-only
# scan) instead of every matching document's tsvector. A memory's scope columns are copied
# so that the search's WHERE clause applies here unchanged (store/bm25.py). Lexemes are cut
# to TERM_CHARS characters so that an index row fits a btree page (2,704 bytes) for any ids
# admission accepts (user ids <= 256 characters, groups and topics <= 64); project names
# are not length-checked, which the README asks operators to keep short.
TERM_CHARS = 32
memory_terms = Table(
    "memory_terms",
    metadata,
    Column("memory_id", String, nullable=False),
    Column("project", String, nullable=False),
    Column("group", String, nullable=False),
    Column("topic", String, nullable=False),
    Column("user_id", String),
    Column("properties", JSONB, nullable=False),
    Column("status", String, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("lexeme", String, nullable=False),
    # Occurrences of the lexeme in the memory, and the memory's length (tsv_length).
    Column("tf", Integer, nullable=False),
    Column("dl", Integer, nullable=False),
    Index(
        "memory_terms_lookup",
        "project",
        "group",
        "lexeme",
        postgresql_include=["user_id", "topic", "status", "memory_id", "tf", "dl", "updated_at"],
    ),
    Index("memory_terms_memory", "memory_id"),
)

memory_versions = Table(
    "memory_versions",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("memory_id", String, nullable=False),
    Column("project", String, nullable=False),
    Column("group", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("content", Text, nullable=False),
    Column("valid_from", DateTime(timezone=True), nullable=False),
    Column("valid_to", DateTime(timezone=True), nullable=False),
    Column("change", String, nullable=False),
    # The run that ended this version (rewrote or deleted it).
    Column("run_id", String),
    # The state as it was, with what search needs to rank it as of then (no re-embedding).
    Column("status", String, nullable=False),
    # None for versions kept before 0006: as-of search uses the memory's current vector.
    Column("embedding", FastVector()),
    Column("tsv", TSVECTOR, Computed("to_tsvector('english', content)", persisted=True)),
    Column("tsv_length", Integer, Computed(TOKEN_COUNT, persisted=True)),
    Column("event_time", DateTime(timezone=True), nullable=False),
    Column("event_time_end", DateTime(timezone=True), nullable=False),
    # The run that wrote this version (None: a delete through the API) and how.
    Column("written_by_run_id", String),
    Column("operation", String, nullable=False),
    Index("memory_versions_memory", "memory_id", "version"),
    Index("memory_versions_scope", "project", "group", "valid_to"),
)

# Per buffer (group, buffer step, scope): the latest event time it has taken in. Time
# triggers follow it (core/buffering.py); it outlives the flushes of the buffer's items.
buffer_watermarks = Table(
    "buffer_watermarks",
    metadata,
    Column("project", String, primary_key=True),
    Column("group", String, primary_key=True),
    Column("step_id", String, primary_key=True),
    Column("scope_key", String, primary_key=True),
    Column("watermark", DateTime(timezone=True), nullable=False),
)

# One tombstone per erased user and project: a salted hash of the normalized user id (never
# the id), the admission number the erase drew, and where the Kafka raw log ended then.
erasures = Table(
    "erasures",
    metadata,
    Column("project", String, nullable=False),
    Column("subject", String, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("raw_log_position", JSONB),
    Column("erased_at", DateTime(timezone=True), nullable=False),
    # When the erase's clean-up committed (None: not yet; `pending_erasures` holds it).
    Column("completed_at", DateTime(timezone=True)),
    PrimaryKeyConstraint("project", "subject", name="erasures_pkey"),
)

# Erases whose tombstone is written and whose clean-up has not committed yet: the user id
# (held only until then), the tombstone's number, and the runs it covered as they stood
# when it was written (run id -> status). Start-up and a periodic sweep finish them.
pending_erasures = Table(
    "pending_erasures",
    metadata,
    Column("project", String, primary_key=True),
    Column("user_id", String, primary_key=True),
    Column("seq", BigInteger, nullable=False),
    Column("runs", JSONB),
    Column("requested_at", DateTime(timezone=True), nullable=False),
)

# Stored times that were outside the accepted range (mnemo.domain.instant) when migration
# 0015 repaired them: which row and column, the original as Postgres rendered it, and what
# was done (clamped to the range, or removed).
time_quarantine = Table(
    "time_quarantine",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("table_name", String, nullable=False),
    Column("row_key", JSONB, nullable=False),
    Column("column_name", String, nullable=False),
    Column("original", String, nullable=False),
    Column("action", String, nullable=False),
    Column("repaired_at", DateTime(timezone=True), nullable=False),
)

# One row per live pipeline worker process (embedded workers, stage services), refreshed
# every MNEMO_HEARTBEAT_SECONDS with the database's clock; /readyz reads them.
worker_heartbeats = Table(
    "worker_heartbeats",
    metadata,
    Column("worker_id", String, primary_key=True),
    Column("role", String, nullable=False),
    Column("host", String, nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("beat_at", DateTime(timezone=True), nullable=False),
)

# Which mnemo release brought the schema to each revision (migration 0018,
# mnemo.store.schema_release): an older mnemo names the release a newer database needs.
schema_releases = Table(
    "schema_releases",
    metadata,
    Column("revision", String, primary_key=True),
    Column("mnemo_version", String, nullable=False),
    Column("migrated_at", DateTime(timezone=True), nullable=False),
)

# One row: this database's installation id and the topic prefix its gateway claimed
# (migration 0020, mnemo.store.installation).
installation = Table(
    "installation",
    metadata,
    Column("singleton", Boolean, primary_key=True),
    Column("installation_id", String, nullable=False),
    Column("topic_prefix", String, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    CheckConstraint("singleton", name="installation_singleton"),
)

# -- Memory over time (migration 0006) ------------------------------------------------------

# Consolidation: which rule holds each source episode (a memory is the source of at most
# one rule); the rule's sources are the rows with its id.
memory_sources = Table(
    "memory_sources",
    metadata,
    Column("source_id", String, primary_key=True),
    Column("rule_id", String, nullable=False),
    Column("project", String, nullable=False),
    Column("group", String, nullable=False),
    Column("pass_id", String, nullable=False),
    Column("linked_at", DateTime(timezone=True), nullable=False),
    Index("memory_sources_rule", "rule_id"),
)

# Consolidation: per scope, the episodes new since its last pass (what the triggers see).
consolidation_scopes = Table(
    "consolidation_scopes",
    metadata,
    Column("project", String, primary_key=True),
    Column("group", String, primary_key=True),
    Column("scope_key", String, primary_key=True),
    Column("user_id", String),
    Column("properties", JSONB, nullable=False),
    Column("new_count", Integer, nullable=False),
    Column("first_new_at", DateTime(timezone=True)),
    Column("last_new_at", DateTime(timezone=True)),
    Column("last_pass_at", DateTime(timezone=True)),
    Column("last_error", Text),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Index("consolidation_scopes_waiting", "new_count", postgresql_where=text("new_count > 0")),
)

# Reconsolidation: which memory ids each search returned, for whom, and when.
memory_recalls = Table(
    "memory_recalls",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("project", String, nullable=False),
    Column("group", String, nullable=False),
    Column("user_id", String),
    Column("properties", JSONB, nullable=False),
    Column("memory_id", String, nullable=False),
    Column("recalled_at", DateTime(timezone=True), nullable=False),
    Index("memory_recalls_scope", "project", "group", "user_id", "recalled_at"),
    Index("memory_recalls_memory", "memory_id"),
    Index("memory_recalls_at", "recalled_at", postgresql_using="brin"),
)

# Reconsolidation: the gate's decision per recalled memory and run, and whether it was written
# (the hourly cap counts the written ones).
reconsolidation_decisions = Table(
    "reconsolidation_decisions",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("project", String, nullable=False),
    Column("group", String, nullable=False),
    Column("run_id", String, nullable=False),
    Column("memory_id", String, nullable=False),
    Column("user_id", String),
    Column("decision", String, nullable=False),
    Column("evidence", Text, nullable=False),
    Column("applied", Boolean, nullable=False),
    Column("reason", Text),
    Column("decided_at", DateTime(timezone=True), nullable=False),
    Index("reconsolidation_decisions_run", "run_id"),
    Index("reconsolidation_decisions_memory", "memory_id", "decided_at"),
)

# Idempotency keys of adds, per project (store/idempotency.py): written with the run's row,
# so a key exists exactly when its run does; free again after `expires_at`.
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("project", String, nullable=False),
    Column("key", String, nullable=False),
    Column("fingerprint", String, nullable=False),
    Column("run_id", String, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("project", "key", name="idempotency_keys_pkey"),
    Index("idempotency_keys_expires", "expires_at"),
)
