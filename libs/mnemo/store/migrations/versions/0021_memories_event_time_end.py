"""An index for the successors a search looks up (`store.search.later_memories`).

Every search asks for the scope's memories whose evidence ends after its earliest hit's,
newest first (event_time_end DESC, id), up to a few. Without an index Postgres read and
sorted the whole scope: at 100k memories in one scope that lookup took 57 ms in bm25 mode
and 87 ms in hybrid, more than the ranking itself (bench section 3, 2026-12-07). With this
index it walks from the newest end and stops after the first few in scope (1.6 / 3.6 ms).

Revision ID: 0021
"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        'CREATE INDEX memories_event_time_end ON memories (project, "group", event_time_end DESC, id)'
    )


def downgrade() -> None:
    op.execute("DROP INDEX memories_event_time_end")
