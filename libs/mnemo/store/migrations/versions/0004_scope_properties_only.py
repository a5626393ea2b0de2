"""A memory keeps only the properties its topic is scoped by.

Earlier commits stored every property of the add on each memory, so a filter on a key that a
topic is not scoped by (e.g. `repo_name` on a user-scoped preferences topic) could hide it.
The keys kept come from each group's current topic configuration; memories of topics no
longer in their group are left as they are. The add's full properties stay in `runs`.
`memory_versions` stores no properties, so it needs no change.

Revision ID: 0004
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        WITH scopes AS (
            SELECT g.project, g.name AS group_name, topic ->> 'name' AS topic,
                   ARRAY(
                       SELECT jsonb_array_elements_text(
                           COALESCE(topic -> 'scoping' -> 'scope_properties', '[]'::jsonb)
                       )
                   ) AS keys
            FROM groups AS g, jsonb_array_elements(g.config -> 'topics') AS topic
        )
        UPDATE memories AS m
        SET properties = COALESCE(
            (SELECT jsonb_object_agg(p.key, p.value)
             FROM jsonb_each(m.properties) AS p
             WHERE p.key = ANY(s.keys)),
            '{}'::jsonb
        )
        FROM scopes AS s
        WHERE m.project = s.project
          AND m."group" = s.group_name
          AND m.topic = s.topic
          AND EXISTS (
              SELECT 1 FROM jsonb_object_keys(m.properties) AS k WHERE NOT (k = ANY(s.keys))
          )
        """
    )


def downgrade() -> None:
    """Nothing to undo in the schema; the stripped values remain in each run's properties."""
