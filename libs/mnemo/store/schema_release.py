"""Which mnemo wrote a database's schema, so that an older mnemo refuses it by name.

Alembic only knows the revisions it ships: an older mnemo meeting a newer database would
fail with "Can't locate revision". Every migration pass records the release that brought
the schema to its head (table `schema_releases`, revision 0018), and `check_known`
turns an unknown revision into a sentence naming the release that is needed.
"""

from __future__ import annotations

from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect, text

from mnemo import __version__


class DatabaseTooNew(RuntimeError):
    """The database's schema is newer than this mnemo's migrations."""


def current_revision(conn: Connection) -> str | None:
    """The database's alembic revision (None: never migrated)."""
    if not inspect(conn).has_table("alembic_version"):
        return None
    row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
    return None if row is None else str(row[0])


def check_known(conn: Connection, scripts: ScriptDirectory) -> None:
    """Raise DatabaseTooNew when the database is at a revision this mnemo does not ship."""
    revision = current_revision(conn)
    if revision is None or revision in {s.revision for s in scripts.walk_revisions()}:
        return
    release = None
    if inspect(conn).has_table("schema_releases"):
        row = conn.execute(
            text("SELECT mnemo_version FROM schema_releases WHERE revision = :r"), {"r": revision}
        ).first()
        release = None if row is None else str(row[0])
    needed = f"mnemo {release} or newer" if release else "a newer mnemo"
    raise DatabaseTooNew(
        f"the database's schema is at revision {revision}, written by {needed}; this mnemo "
        f"({__version__}) knows revisions up to {scripts.get_current_head()}. Run {needed} "
        "against it, or restore a backup made by this release (docs/guides/operate.md)"
    )


def record_release(conn: Connection, head: str) -> None:
    """Note that this release brought the schema to `head` (kept for the first release only:
    a later start of the same schema by another build of it changes nothing)."""
    conn.execute(
        text(
            "INSERT INTO schema_releases (revision, mnemo_version, migrated_at) "
            "VALUES (:r, :v, now()) ON CONFLICT (revision) DO NOTHING"
        ),
        {"r": head, "v": __version__},
    )
