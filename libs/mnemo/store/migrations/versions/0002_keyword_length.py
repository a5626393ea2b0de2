"""Store each memory's lexeme count, for BM25's length normalisation.

Revision ID: 0002
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE memories ADD COLUMN tsv_length integer "
        "GENERATED ALWAYS AS (length(to_tsvector('english', content))) STORED"
    )


def downgrade() -> None:
    op.drop_column("memories", "tsv_length")
