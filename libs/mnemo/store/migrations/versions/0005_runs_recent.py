"""Index runs by project and creation time, for listing a project's recent runs.

The console pages through runs newest first with a (created_at, run_id) cursor. Neither
column ever changes, so status updates stay HOT-eligible.

Revision ID: 0005
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("runs_project_created", "runs", ["project", "created_at", "run_id"])


def downgrade() -> None:
    op.drop_index("runs_project_created", "runs")
