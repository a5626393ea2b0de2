"""Worker heartbeats (what /readyz reads), and an index of the runs still open (what the
open-run quotas and the oldest running run's age read).

Revision ID: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "worker_heartbeats",
        sa.Column("worker_id", sa.String, primary_key=True),
        sa.Column("role", sa.String, nullable=False),
        sa.Column("host", sa.String, nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("beat_at", TS, nullable=False),
    )
    op.create_index(
        "runs_open",
        "runs",
        ["project", "created_at"],
        postgresql_where=sa.text("status IN ('running', 'in_buffer')"),
    )


def downgrade() -> None:
    op.drop_index("runs_open", table_name="runs")
    op.drop_table("worker_heartbeats")
