"""BM25 document length counts tokens, not distinct lexemes.

`tsv_length` was `length(tsvector)`: the number of DISTINCT lexemes. Okapi BM25's dl is the
document's length in terms (here: its English lexeme occurrences, stop words excluded), and
vocabulary grows slower than text, so long documents looked short and won on incidental
matches (on BEAM-128K the top BM25 hit was a ~520-word message where the evidence is ~45).
The column is regenerated for every row of `memories` and of `memory_versions` (as-of
keyword search ranks versions with it).

Revision ID: 0013
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

TABLES = ("memories", "memory_versions")


def upgrade() -> None:
    op.execute(
        "CREATE FUNCTION mnemo_token_count(doc tsvector) RETURNS integer "
        "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE "
        "AS $$ SELECT coalesce(sum(cardinality(positions)), 0)::integer FROM unnest(doc) $$"
    )
    for table in TABLES:
        op.drop_column(table, "tsv_length")
        op.execute(
            f"ALTER TABLE {table} ADD COLUMN tsv_length integer GENERATED ALWAYS AS "
            "(mnemo_token_count(to_tsvector('english', content))) STORED"
        )


def downgrade() -> None:
    for table in TABLES:
        op.drop_column(table, "tsv_length")
        op.execute(
            f"ALTER TABLE {table} ADD COLUMN tsv_length integer "
            "GENERATED ALWAYS AS (length(to_tsvector('english', content))) STORED"
        )
    op.execute("DROP FUNCTION mnemo_token_count(tsvector)")
