"""Bus records name where they travel their "channel" (a memory's topic is another thing)
and the scope they are ordered by their "scope_key", as everywhere else.

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
    op.alter_column("bus_records", "key", new_column_name="scope_key")
    op.execute("ALTER INDEX bus_records_key_id RENAME TO bus_records_scope_id")


def downgrade() -> None:
    op.execute("ALTER INDEX bus_records_scope_id RENAME TO bus_records_key_id")
    op.alter_column("bus_records", "scope_key", new_column_name="key")
    op.alter_column("bus_records", "channel", new_column_name="topic")
