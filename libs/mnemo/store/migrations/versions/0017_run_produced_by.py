"""What produced a run's memories: the model's name, or `offline` (issue 32).

Set when the run commits, from the provider the pipeline ran with (in Kafka mode the
worker's, not the gateway's). Runs committed before this revision stay NULL: unknown.

Revision ID: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("produced_by", sa.String(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "produced_by")
