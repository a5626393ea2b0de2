"""Memory over time: consolidation links and state, the recall log, the gate's decisions,
and the ids an add names as recalled.

Memories gain a third status, `consolidated` (status is a plain string column, so no DDL).

Revision ID: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_AT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("runs", sa.Column("recalled", JSONB))
    op.create_table(
        "memory_sources",
        sa.Column("source_id", sa.String, primary_key=True),
        sa.Column("rule_id", sa.String, nullable=False),
        sa.Column("project", sa.String, nullable=False),
        sa.Column("group", sa.String, nullable=False),
        sa.Column("pass_id", sa.String, nullable=False),
        sa.Column("linked_at", _AT, nullable=False),
    )
    op.create_index("memory_sources_rule", "memory_sources", ["rule_id"])
    op.create_table(
        "consolidation_scopes",
        sa.Column("project", sa.String, primary_key=True),
        sa.Column("group", sa.String, primary_key=True),
        sa.Column("scope_key", sa.String, primary_key=True),
        sa.Column("user_id", sa.String),
        sa.Column("properties", JSONB, nullable=False),
        sa.Column("new_count", sa.Integer, nullable=False),
        sa.Column("first_new_at", _AT),
        sa.Column("last_new_at", _AT),
        sa.Column("last_pass_at", _AT),
        sa.Column("last_error", sa.Text),
        sa.Column("updated_at", _AT, nullable=False),
    )
    op.create_index(
        "consolidation_scopes_waiting",
        "consolidation_scopes",
        ["new_count"],
        postgresql_where=sa.text("new_count > 0"),
    )
    op.create_table(
        "memory_recalls",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("project", sa.String, nullable=False),
        sa.Column("group", sa.String, nullable=False),
        sa.Column("user_id", sa.String),
        sa.Column("properties", JSONB, nullable=False),
        sa.Column("memory_id", sa.String, nullable=False),
        sa.Column("recalled_at", _AT, nullable=False),
    )
    op.create_index(
        "memory_recalls_scope", "memory_recalls", ["project", "group", "user_id", "recalled_at"]
    )
    op.create_index("memory_recalls_memory", "memory_recalls", ["memory_id"])
    op.create_index("memory_recalls_at", "memory_recalls", ["recalled_at"], postgresql_using="brin")
    op.create_table(
        "reconsolidation_decisions",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("project", sa.String, nullable=False),
        sa.Column("group", sa.String, nullable=False),
        sa.Column("run_id", sa.String, nullable=False),
        sa.Column("memory_id", sa.String, nullable=False),
        sa.Column("user_id", sa.String),
        sa.Column("decision", sa.String, nullable=False),
        sa.Column("evidence", sa.Text, nullable=False),
        sa.Column("applied", sa.Boolean, nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("decided_at", _AT, nullable=False),
    )
    op.create_index("reconsolidation_decisions_run", "reconsolidation_decisions", ["run_id"])
    op.create_index(
        "reconsolidation_decisions_memory",
        "reconsolidation_decisions",
        ["memory_id", "decided_at"],
    )


def downgrade() -> None:
    op.execute("UPDATE memories SET status = 'active' WHERE status = 'consolidated'")
    for table in (
        "reconsolidation_decisions",
        "memory_recalls",
        "consolidation_scopes",
        "memory_sources",
    ):
        op.drop_table(table)
    op.drop_column("runs", "recalled")
