"""One installation per database (issue 39): its id, stamped into every Kafka record, and
the topic prefix its gateway publishes under, claimed by the first gateway. A stage checks
both against its own settings before it joins a consumer group.

Revision ID: 0020
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        "installation",
        sa.Column("singleton", sa.Boolean(), primary_key=True),
        sa.Column("installation_id", sa.String(), nullable=False),
        sa.Column("topic_prefix", sa.String(), nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.CheckConstraint("singleton", name="installation_singleton"),
    )
    op.bulk_insert(table, [{"singleton": True, "installation_id": str(uuid.uuid4())}])


def downgrade() -> None:
    op.drop_table("installation")
