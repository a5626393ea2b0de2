"""One embedded Postgres server per test session, with a fresh database per engine."""

from __future__ import annotations

import os
import stat
import tempfile
import uuid
from pathlib import Path
from typing import Any

from mnemo.store.database import start_embedded


def make_traversable_for_postgres(path: Path) -> None:
    """Let the embedded Postgres reach a data dir under this test's temp folders.

    Run as root, pgserver runs Postgres as its `pgserver` user with root's groups, which
    must be able to traverse every parent of the data dir. mnemo never widens an existing
    folder, and pytest makes its temp folders 0700, so a test grants search-only access to
    root's group (g+x) on its own temp folders: `path` and its parents below the system
    temp dir.
    """
    if os.geteuid() != 0:
        return
    top = Path(tempfile.gettempdir()).resolve()
    current = path.resolve()
    while top in current.parents:
        if current.exists():
            current.chmod(stat.S_IMODE(current.stat().st_mode) | stat.S_IXGRP)
        current = current.parent


class EmbeddedPostgres:
    def __init__(self, root: Path) -> None:
        make_traversable_for_postgres(root)
        self.server: Any
        self.server, self.url = start_embedded(root)

    def new_database(self, prefix: str = "mnemo") -> str:
        """Create an empty database and return its URL (engines in it share nothing)."""
        name = f"{prefix}_{uuid.uuid4().hex[:8]}"
        self.server.psql(f"CREATE DATABASE {name};")
        self.server.psql(f"\\c {name}\nCREATE EXTENSION IF NOT EXISTS vector;")
        base, _, query = self.url.partition("?")
        head = base.rsplit("/", 1)[0]
        return f"{head}/{name}?{query}"

    def stop(self) -> None:
        self.server.cleanup()
