"""A database that a newer mnemo migrated is refused by name, before anything is written;
the release that brought a schema to its head is recorded (`store.schema_release`)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from mnemo import __version__
from mnemo.store.backup import plain_url
from mnemo.store.database import connect
from mnemo.store.schema_release import DatabaseTooNew
from tests.support.ports import free_port
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]


def sql(url: str, statement: str) -> list[tuple[object, ...]]:
    async def run() -> list[tuple[object, ...]]:
        async with await psycopg.AsyncConnection.connect(plain_url(url)) as conn:
            cursor = await conn.execute(statement)
            rows = await cursor.fetchall() if cursor.description else []
            await conn.commit()
            return rows

    return asyncio.run(run())


def opened(url: str, data_dir: Path) -> None:
    async def run() -> None:
        database = await connect(url, data_dir, 384, 1, 40)
        await database.close()

    asyncio.run(run())


def test_the_release_that_migrated_is_recorded(postgres: EmbeddedPostgres, tmp_path: Path) -> None:
    url = postgres.new_database("release")
    opened(url, tmp_path)
    head = sql(url, "SELECT version_num FROM alembic_version")[0][0]
    assert sql(url, "SELECT revision, mnemo_version FROM schema_releases") == [(head, __version__)]


def test_a_newer_database_is_refused_naming_the_release(
    postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    url = postgres.new_database("newer")
    opened(url, tmp_path)
    # What a later release leaves behind: a revision this one does not ship, and its name.
    sql(url, "UPDATE alembic_version SET version_num = '0999'")
    sql(url, "INSERT INTO schema_releases VALUES ('0999', '9.1.0', now())")
    tables = sql(url, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
    with pytest.raises(DatabaseTooNew) as refused:
        opened(url, tmp_path)
    said = str(refused.value)
    assert "revision 0999" in said and "mnemo 9.1.0 or newer" in said
    assert sql(url, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == tables

    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
           "MNEMO_DATABASE_URL": url, "MNEMO_AUTH_DISABLED": "true"}  # fmt: skip
    serve = subprocess.run(
        [sys.executable, "-m", "mnemo.cli.main", "serve", "--port", str(free_port())],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert serve.returncode == 1
    assert "mnemo 9.1.0 or newer" in serve.stderr and "Traceback" not in serve.stderr
