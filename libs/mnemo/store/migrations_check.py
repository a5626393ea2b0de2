"""Whether a schema revision is one this mnemo ships (no database needed)."""

from __future__ import annotations

from alembic.config import Config
from alembic.script import ScriptDirectory

from mnemo.store.database import MIGRATIONS


def known_revision(revision: str) -> bool:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return revision in {s.revision for s in ScriptDirectory.from_config(cfg).walk_revisions()}
