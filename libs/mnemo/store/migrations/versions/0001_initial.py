"""Initial schema: memories with versions, drafts, runs, the durable bus, buffers, keys.

Revision ID: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql as pg

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    dim = int(op.get_context().config.attributes.get("embedding_dim", 384))  # type: ignore[union-attr]
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "settings_meta",
        sa.Column("key", sa.String, primary_key=True),
        sa.Column("value", sa.String, nullable=False),
    )
    op.execute(f"INSERT INTO settings_meta VALUES ('embedding_dim', '{dim}')")
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("project", sa.String, nullable=False),
        sa.Column("name", sa.String, nullable=False),
        sa.Column("key_hash", sa.String, nullable=False, unique=True),
        sa.Column("prefix", sa.String, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("revoked_at", TS),
    )
    op.create_table(
        "groups",
        sa.Column("project", sa.String, primary_key=True),
        sa.Column("name", sa.String, primary_key=True),
        sa.Column("config", pg.JSONB, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("run_id", sa.String, primary_key=True),
        sa.Column("project", sa.String, nullable=False),
        sa.Column("group", sa.String, nullable=False),
        sa.Column("input_type", sa.String, nullable=False),
        sa.Column("starting_step", sa.Integer, nullable=False),
        sa.Column("starting_step_id", sa.String, nullable=False),
        sa.Column("user_id", sa.String),
        sa.Column("properties", pg.JSONB, nullable=False),
        sa.Column("scope_key", sa.String, nullable=False),
        sa.Column("status", sa.String, nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("raw_input", pg.JSONB, nullable=False),
        sa.Column("committed_operations", pg.JSONB),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_index("runs_project_user", "runs", ["project", "user_id"])
    op.create_table(
        "bus_records",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("topic", sa.String, nullable=False),
        sa.Column("key", sa.String, nullable=False),
        sa.Column("payload", pg.JSONB, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("bus_records_key_id", "bus_records", ["key", "id"])
    op.create_table(
        "buffer_items",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("project", sa.String, nullable=False),
        sa.Column("group", sa.String, nullable=False),
        sa.Column("step_id", sa.String, nullable=False),
        sa.Column("scope_key", sa.String, nullable=False),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("payload", pg.JSONB, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index(
        "buffer_items_scope", "buffer_items", ["project", "group", "step_id", "scope_key", "id"]
    )
    op.create_table(
        "drafts",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("batch_id", sa.String, nullable=False),
        sa.Column("project", sa.String, nullable=False),
        sa.Column("group", sa.String, nullable=False),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("candidate", pg.JSONB, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("drafts_batch", "drafts", ["batch_id"])
    op.create_index("drafts_run", "drafts", ["run_id"])
    op.create_table(
        "applied_batches",
        sa.Column("batch_id", sa.String, primary_key=True),
        sa.Column("applied_at", TS, nullable=False),
    )
    op.create_table(
        "memories",
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("project", sa.String, nullable=False),
        sa.Column("group", sa.String, nullable=False),
        sa.Column("topic", sa.String, nullable=False),
        sa.Column("user_id", sa.String),
        sa.Column("properties", pg.JSONB, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("embedding", sa.Text, nullable=False),
        sa.Column("status", sa.String, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("run_ids", pg.ARRAY(sa.String), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.execute(
        f"ALTER TABLE memories ALTER COLUMN embedding TYPE vector({dim}) USING embedding::vector({dim})"
    )
    op.execute(
        "ALTER TABLE memories ADD COLUMN tsv tsvector "
        "GENERATED ALWAYS AS (to_tsvector('english', content)) STORED"
    )
    op.create_index(
        "memories_scope", "memories", ["project", "group", "user_id", "topic", "status"]
    )
    op.execute("CREATE INDEX memories_tsv ON memories USING gin (tsv)")
    op.execute(
        "CREATE INDEX memories_embedding ON memories USING hnsw (embedding vector_cosine_ops) "
        "WITH (m = 16, ef_construction = 64)"
    )
    op.execute("CREATE INDEX memories_properties ON memories USING gin (properties)")
    op.create_table(
        "memory_versions",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("memory_id", sa.String, nullable=False),
        sa.Column("project", sa.String, nullable=False),
        sa.Column("group", sa.String, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("valid_from", TS, nullable=False),
        sa.Column("valid_to", TS, nullable=False),
        sa.Column("change", sa.String, nullable=False),
        sa.Column("run_id", sa.String),
    )
    op.create_index("memory_versions_memory", "memory_versions", ["memory_id", "version"])


def downgrade() -> None:
    for table in (
        "memory_versions",
        "memories",
        "applied_batches",
        "drafts",
        "buffer_items",
        "bus_records",
        "runs",
        "groups",
        "api_keys",
        "settings_meta",
    ):
        op.drop_table(table)
