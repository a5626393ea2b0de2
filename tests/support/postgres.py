"""One embedded Postgres server per test session, with a fresh database per engine."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from mnemo.store.database import start_embedded


class EmbeddedPostgres:
    def __init__(self, root: Path) -> None:
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
