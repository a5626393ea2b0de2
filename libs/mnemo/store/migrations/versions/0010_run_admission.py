"""When the pipeline took a run's queued record (`runs.admitted_at`).

The distributed mode's gateway answers 503 when the broker does not acknowledge an add in
time, yet the producer may still deliver the record later. The gateway's refusal (deleting
the row) and the extractor's admission (setting `admitted_at`) are both conditional on
`admitted_at IS NULL`, so exactly one wins: a refused add is never processed, and an add the
extractor took before the refusal is answered as accepted. NULL while only queued.

Revision ID: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("admitted_at", sa.DateTime(timezone=True)))


def downgrade() -> None:
    op.drop_column("runs", "admitted_at")
