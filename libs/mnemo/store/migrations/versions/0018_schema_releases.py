"""Which mnemo release brought the schema to each revision (`store.schema_release`), so
that an older mnemo names the release a newer database needs (issue 39).

Revision ID: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "schema_releases",
        sa.Column("revision", sa.String(), primary_key=True),
        sa.Column("mnemo_version", sa.String(), nullable=False),
        sa.Column("migrated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("schema_releases")
