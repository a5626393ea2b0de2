"""An index for a memory's neighbours in its run (`store.neighbours`, the context signal).

Every search with the context signal on asks, for each of its candidates, for the visible
memory just before and just after it among those its first run wrote, in event-time order.
With this index each is one short walk from the candidate's place in its run, whatever the
size of the scope; without it Postgres read every memory of the candidates' runs.

Revision ID: 0022
"""

from __future__ import annotations

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX memories_run_order "
        'ON memories (project, "group", (run_ids[1]), event_time, id)'
    )


def downgrade() -> None:
    op.execute("DROP INDEX memories_run_order")
