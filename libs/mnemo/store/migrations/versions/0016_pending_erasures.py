"""Erase is a durable job: a tombstone says when its erase completed, and an erase that has
not completed keeps the (project, user) it is for in `pending_erasures` until it has.

Before, an erase killed between its tombstone and its clean-up left the user's data readable
for good: the tombstone holds only a salted hash of the user id, so nothing could finish it.
Tombstones already written are taken to be complete, except those of users who still have a
run admitted before the tombstone that the erase did not redact: those erases were cut short,
and are queued here to be finished (start-up and the periodic sweep do it).

Revision ID: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

# mnemo.store.tombstones.subject_sql as of this revision (r: a runs row).
_SUBJECT = (
    "encode(sha256(convert_to((SELECT value FROM settings_meta WHERE key = 'erasure_salt') "
    "|| ':' || (length(r.project) || ':' || r.project || ':' || r.user_id), 'UTF8')), 'hex')"
)


def upgrade() -> None:
    op.add_column("erasures", sa.Column("completed_at", sa.DateTime(timezone=True)))
    op.create_table(
        "pending_erasures",
        sa.Column("project", sa.String, primary_key=True),
        sa.Column("user_id", sa.String, primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("runs", JSONB),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.execute(
        "INSERT INTO pending_erasures (project, user_id, seq, runs, requested_at) "
        "SELECT DISTINCT ON (r.project, r.user_id) r.project, r.user_id, e.seq, NULL, "
        "e.erased_at FROM runs AS r JOIN erasures AS e ON e.project = r.project "
        f"AND e.subject = {_SUBJECT} WHERE r.user_id IS NOT NULL AND r.admitted_seq < e.seq "
        "AND r.redaction IS DISTINCT FROM 'erased'"
    )
    op.execute(
        "UPDATE erasures AS e SET completed_at = e.erased_at WHERE NOT EXISTS (SELECT 1 FROM "
        "pending_erasures AS p WHERE p.project = e.project AND p.seq = e.seq)"
    )


def downgrade() -> None:
    op.drop_table("pending_erasures")
    op.drop_column("erasures", "completed_at")
