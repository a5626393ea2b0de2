"""BM25 postings (`memory_terms`), kept by a trigger on `memories`.

Keyword search used to read the tsvector of every document matching any query lexeme and
unnest it: at 100k memories in one scope a query with common words read ~4,000 documents
(56 ms of the hybrid search's 73). It now reads the query's postings of the scope from one
covering index. A row-level trigger keeps the postings of every searchable (active or
consolidated) memory, so commits, rewrites, deletes, consolidation, erasure and imports
keep them exact without knowing they exist. Existing memories are indexed here.

Revision ID: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

TERM_CHARS = 32  # mnemo.store.schema.TERM_CHARS at this revision
COLUMNS = 'memory_id, project, "group", topic, user_id, properties, status, updated_at'


def _postings_of(row: str) -> str:
    """SELECT the postings of memory `row` (NEW in the trigger, m in the backfill)."""
    return (
        f'SELECT {row}.id, {row}.project, {row}."group", {row}.topic, {row}.user_id, '
        f"{row}.properties, {row}.status, {row}.updated_at, left(t.lexeme, {TERM_CHARS}), "
        f"sum(cardinality(t.positions))::integer, {row}.tsv_length "
        f"FROM unnest({row}.tsv) AS t GROUP BY left(t.lexeme, {TERM_CHARS})"
    )


TRIGGER_FUNCTION = f"""
CREATE FUNCTION mnemo_memory_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM memory_terms WHERE memory_id = OLD.id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status IN ('active', 'consolidated') THEN
        INSERT INTO memory_terms ({COLUMNS}, lexeme, tf, dl) {_postings_of("NEW")};
    END IF;
    RETURN NULL;
END $$
"""

TRUNCATE_FUNCTION = """
CREATE FUNCTION mnemo_memory_terms_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE memory_terms;
    RETURN NULL;
END $$
"""


def upgrade() -> None:
    op.create_table(
        "memory_terms",
        sa.Column("memory_id", sa.String, nullable=False),
        sa.Column("project", sa.String, nullable=False),
        sa.Column("group", sa.String, nullable=False),
        sa.Column("topic", sa.String, nullable=False),
        sa.Column("user_id", sa.String),
        sa.Column("properties", JSONB, nullable=False),
        sa.Column("status", sa.String, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lexeme", sa.String, nullable=False),
        sa.Column("tf", sa.Integer, nullable=False),
        sa.Column("dl", sa.Integer, nullable=False),
    )
    op.execute(
        f"INSERT INTO memory_terms ({COLUMNS}, lexeme, tf, dl) "
        f"SELECT p.* FROM memories AS m, LATERAL ({_postings_of('m')}) AS p "
        "WHERE m.status IN ('active', 'consolidated')"
    )
    op.create_index(
        "memory_terms_lookup",
        "memory_terms",
        ["project", "group", "lexeme"],
        postgresql_include=["user_id", "topic", "status", "memory_id", "tf", "dl", "updated_at"],
    )
    op.create_index("memory_terms_memory", "memory_terms", ["memory_id"])
    op.execute(TRIGGER_FUNCTION)
    op.execute(TRUNCATE_FUNCTION)
    # Only writes that change what a posting holds re-index the memory.
    op.execute(
        "CREATE TRIGGER memories_terms AFTER INSERT OR DELETE OR UPDATE OF "
        'content, status, updated_at, topic, user_id, properties, project, "group" '
        "ON memories FOR EACH ROW EXECUTE FUNCTION mnemo_memory_terms()"
    )
    op.execute(
        "CREATE TRIGGER memories_terms_truncate AFTER TRUNCATE ON memories "
        "FOR EACH STATEMENT EXECUTE FUNCTION mnemo_memory_terms_truncate()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER memories_terms_truncate ON memories")
    op.execute("DROP TRIGGER memories_terms ON memories")
    op.execute("DROP FUNCTION mnemo_memory_terms_truncate()")
    op.execute("DROP FUNCTION mnemo_memory_terms()")
    op.drop_table("memory_terms")
