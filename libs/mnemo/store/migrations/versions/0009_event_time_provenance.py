"""Event time, as-of search and provenance.

- memories: the event-time range of their evidence (`event_time`, `event_time_end`), the
  run that wrote the current state (`written_by_run_id`) and how (`operation`);
- memory_versions: each version's status, event-time range, writer and operation, plus what
  search needs to rank it as of then (`embedding`, `tsv`, `tsv_length`);
- buffer_watermarks: the latest event time each buffer has taken in per scope.

Existing rows: a memory's event range is its created_at .. updated_at (the evidence times
are unknown); a version's is its memory's created_at .. its valid_from. Versions kept before
this migration have no embedding (it was never stored): as-of vector search ranks them by
their memory's current vector, keyword search by their own text.

Revision ID: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)

_MEMORIES = """
UPDATE memories AS m SET
    event_time = m.created_at,
    event_time_end = m.updated_at,
    operation = CASE WHEN m.status = 'archived' THEN 'deleted'
                     WHEN m.version = 1 THEN 'created' ELSE 'updated' END,
    written_by_run_id = CASE WHEN m.version = 1 THEN m.run_ids[1] ELSE (
        SELECT v.run_id FROM memory_versions AS v
        WHERE v.memory_id = m.id ORDER BY v.version DESC LIMIT 1) END
"""

# A version's state follows from the change that ended the version before it.
_VERSIONS = """
UPDATE memory_versions AS v SET
    status = CASE WHEN s.prev_change = 'deleted' THEN 'archived' ELSE 'active' END,
    operation = CASE WHEN v.version = 1 THEN 'created'
                     WHEN s.prev_change = 'deleted' THEN 'deleted' ELSE 'updated' END,
    written_by_run_id = CASE WHEN v.version = 1 THEN s.creator ELSE s.prev_run END,
    event_time = LEAST(COALESCE(s.memory_created, v.valid_from), v.valid_from),
    event_time_end = v.valid_from
FROM (
    SELECT v2.id, m.run_ids[1] AS creator, m.created_at AS memory_created,
           LAG(v2.change) OVER w AS prev_change, LAG(v2.run_id) OVER w AS prev_run
    FROM memory_versions AS v2 LEFT JOIN memories AS m ON m.id = v2.memory_id
    WINDOW w AS (PARTITION BY v2.memory_id ORDER BY v2.version)
) AS s
WHERE s.id = v.id
"""


def upgrade() -> None:
    for column in ("event_time", "event_time_end"):
        op.add_column("memories", sa.Column(column, TS))
    op.add_column("memories", sa.Column("written_by_run_id", sa.String))
    op.add_column("memories", sa.Column("operation", sa.String))
    op.execute(_MEMORIES)
    for column in ("event_time", "event_time_end", "operation"):
        op.alter_column("memories", column, nullable=False)

    op.add_column("memory_versions", sa.Column("status", sa.String))
    for column in ("event_time", "event_time_end"):
        op.add_column("memory_versions", sa.Column(column, TS))
    op.add_column("memory_versions", sa.Column("written_by_run_id", sa.String))
    op.add_column("memory_versions", sa.Column("operation", sa.String))
    op.execute(
        "DO $$ BEGIN EXECUTE format('ALTER TABLE memory_versions ADD COLUMN embedding vector(%s)', "
        "(SELECT value FROM settings_meta WHERE key = 'embedding_dim')); END $$"
    )
    op.execute(
        "ALTER TABLE memory_versions ADD COLUMN tsv tsvector "
        "GENERATED ALWAYS AS (to_tsvector('english', content)) STORED"
    )
    op.execute(
        "ALTER TABLE memory_versions ADD COLUMN tsv_length integer "
        "GENERATED ALWAYS AS (length(to_tsvector('english', content))) STORED"
    )
    op.execute(_VERSIONS)
    for column in ("status", "event_time", "event_time_end", "operation"):
        op.alter_column("memory_versions", column, nullable=False)
    op.create_index("memory_versions_scope", "memory_versions", ["project", "group", "valid_to"])

    op.create_table(
        "buffer_watermarks",
        sa.Column("project", sa.String, primary_key=True),
        sa.Column("group", sa.String, primary_key=True),
        sa.Column("step_id", sa.String, primary_key=True),
        sa.Column("scope_key", sa.String, primary_key=True),
        sa.Column("watermark", TS, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("buffer_watermarks")
    op.drop_index("memory_versions_scope", "memory_versions")
    for column in (
        "tsv_length", "tsv", "embedding", "operation", "written_by_run_id",
        "event_time_end", "event_time", "status",
    ):  # fmt: skip
        op.drop_column("memory_versions", column)
    for column in ("operation", "written_by_run_id", "event_time_end", "event_time"):
        op.drop_column("memories", column)
