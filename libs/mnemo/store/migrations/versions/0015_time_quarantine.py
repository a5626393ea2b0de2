"""Stored times outside the accepted range are repaired, their originals kept aside.

Before times were validated at entry (`mnemo.domain.instant`), an import or an add could
store an instant such as `9999-12-31T23:59:59-23:59` (UTC: year 10000) or
`0001-01-01T00:00:00+23:59` (UTC: year 0). Postgres holds them; Python cannot read them back,
so every list, search and export touching such a row failed. Each such value is clamped to
the nearest end of the accepted range, and the original (as Postgres renders it) is
recorded in `time_quarantine`, row by row, so an operator can see what was changed. A buffer
watermark more than a day ahead of the clock (a year-9999 event time made every later add
of its scope flush on its own) is removed the same way: the next add sets it again.

Revision ID: 0015
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

# The accepted range of mnemo.domain.instant (copied: a migration must not change when the
# code it once ran with does).
LOW = "0001-01-02 00:00:00+00"
HIGH = "9999-12-30 23:59:59.999999+00"

# table -> (its key columns, its time columns)
TIMES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "memories": (("id",), ("created_at", "updated_at", "event_time", "event_time_end")),
    "memory_versions": (
        ("id", "memory_id"),
        ("valid_from", "valid_to", "event_time", "event_time_end"),
    ),
    "memory_sources": (("rule_id", "source_id"), ("linked_at",)),
}


def upgrade() -> None:
    op.create_table(
        "time_quarantine",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("table_name", sa.String, nullable=False),
        sa.Column("row_key", JSONB, nullable=False),
        sa.Column("column_name", sa.String, nullable=False),
        sa.Column("original", sa.String, nullable=False),
        sa.Column("action", sa.String, nullable=False),
        sa.Column("repaired_at", sa.DateTime(timezone=True), nullable=False),
    )
    for table, (keys, columns) in TIMES.items():
        key = ", ".join(f"'{k}', {k}" for k in keys)
        for column in columns:
            outside = f"({column} < '{LOW}' OR {column} > '{HIGH}')"
            op.execute(
                "INSERT INTO time_quarantine (table_name, row_key, column_name, original, "
                f"action, repaired_at) SELECT '{table}', jsonb_build_object({key}), "
                f"'{column}', {column}::text, 'clamped', now() FROM {table} WHERE {outside}"
            )
            op.execute(
                f"UPDATE {table} SET {column} = LEAST(GREATEST({column}, '{LOW}'), '{HIGH}') "
                f"WHERE {outside}"
            )
    op.execute(
        "INSERT INTO time_quarantine (table_name, row_key, column_name, original, action, "
        "repaired_at) SELECT 'buffer_watermarks', jsonb_build_object('project', project, "
        "'group', \"group\", 'step_id', step_id, 'scope_key', scope_key), 'watermark', "
        "watermark::text, 'removed', now() FROM buffer_watermarks "
        "WHERE watermark > now() + interval '1 day'"
    )
    op.execute("DELETE FROM buffer_watermarks WHERE watermark > now() + interval '1 day'")


def downgrade() -> None:
    op.drop_table("time_quarantine")
