"""The bus names where a record travels its "channel" (a memory's topic is another thing).

Revision ID: 0003
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.alter_column("bus_records", "topic", new_column_name="channel")


def downgrade() -> None:
    op.alter_column("bus_records", "channel", new_column_name="topic")
