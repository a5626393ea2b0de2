"""Erasure and retention: run admission order, redaction markers, and user tombstones.

`run_admission_seq` numbers run rows as they are admitted and erases as they happen, so a
run admitted before an erase of its user can be told from one admitted after (no clocks).
`erasures` keeps one tombstone per erased user: a salted SHA-256 of the normalized user id,
salted with a random per-installation secret (`settings_meta.erasure_salt`).

Revision ID: 0006
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql as pg

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.execute("CREATE SEQUENCE run_admission_seq")
    # Existing rows are numbered in creation order, before any erase.
    op.add_column("runs", sa.Column("admitted_seq", sa.BigInteger, nullable=True))
    op.execute(
        "UPDATE runs SET admitted_seq = n FROM ("
        "SELECT run_id, nextval('run_admission_seq') AS n FROM "
        "(SELECT run_id FROM runs ORDER BY created_at, run_id) ordered) numbered "
        "WHERE runs.run_id = numbered.run_id"
    )
    op.alter_column(
        "runs",
        "admitted_seq",
        nullable=False,
        server_default=sa.text("nextval('run_admission_seq')"),
    )
    op.add_column("runs", sa.Column("redaction", sa.String))
    op.add_column("runs", sa.Column("redacted_at", TS))
    op.create_index(
        "runs_unredacted_created",
        "runs",
        ["project", "group", "created_at"],
        postgresql_where=sa.text("redaction IS NULL"),
    )
    op.create_table(
        "erasures",
        sa.Column("project", sa.String, nullable=False),
        sa.Column("subject", sa.String, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("raw_log_position", pg.JSONB),
        sa.Column("erased_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("project", "subject", name="erasures_pkey"),
    )
    salt = secrets.token_hex(32)
    op.execute(f"INSERT INTO settings_meta VALUES ('erasure_salt', '{salt}')")


def downgrade() -> None:
    op.execute("DELETE FROM settings_meta WHERE key = 'erasure_salt'")
    op.drop_table("erasures")
    op.drop_index("runs_unredacted_created", table_name="runs")
    op.drop_column("runs", "redacted_at")
    op.drop_column("runs", "redaction")
    op.drop_column("runs", "admitted_seq")
    op.execute("DROP SEQUENCE run_admission_seq")
