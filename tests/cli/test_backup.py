"""`mnemo backup` and `mnemo restore` as an operator runs them: every table comes back as
it was, a backup taken while mnemo serves restores and serves, a database is never
overwritten by accident, and a distributed restore leaves in-flight runs retryable."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from mnemo.cli.main import app
from mnemo.client import MnemoClient
from mnemo.store.backup import INTERRUPTED, plain_url
from tests.api.live_server import LiveServer, gateway_settings
from tests.support.postgres import EmbeddedPostgres, make_traversable_for_postgres
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.transfer import build_project, finds_a_built_memory

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
_TABLES = (
    "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables "
    "WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
)


def fingerprint(url: str) -> dict[str, tuple[int, str]]:
    """Every table's row count and a digest of its rows in a fixed order."""

    async def read() -> dict[str, tuple[int, str]]:
        async with await psycopg.AsyncConnection.connect(plain_url(url)) as conn:
            tables = [r[0] for r in await (await conn.execute(_TABLES)).fetchall()]
            found = {}
            for table in tables:
                row = await (
                    await conn.execute(
                        f"SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' "
                        f"ORDER BY t::text), '')) FROM {table} t"
                    )
                ).fetchone()
                assert row is not None
                found[table] = (int(row[0]), str(row[1]))
            return found

    return asyncio.run(read())


def cli(url: str, *args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"MNEMO_DATABASE_URL": url})


@pytest.fixture
def source(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> Iterator[LiveServer]:
    settings = gateway_settings(postgres.new_database("backup_src"), tmp_path / "src")
    server = LiveServer(settings, llm_server).start()
    yield server
    server.stop()


def test_a_restore_gives_back_every_table_as_it_was(
    source: LiveServer, postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    assert source.engine is not None
    source.run(build_project(source.engine, "backed-up"))
    source.create_key("backed-up")
    source.stop()  # quiescent: the source's tables are what the backup must hold
    url = source.settings.database_url
    assert url is not None
    before = fingerprint(url)
    assert before["public.memories"][0] > 0 and before["public.runs"][0] > 0

    backup = tmp_path / "store.backup"
    done = cli(url, "backup", "-o", str(backup))
    assert done.exit_code == 0, done.output
    target = postgres.new_database("backup_dst")
    restored = cli(target, "restore", str(backup))
    assert restored.exit_code == 0, restored.output
    assert "every count as in the backup" in restored.output
    assert fingerprint(target) == before


def test_a_backup_taken_while_serving_restores_and_serves(
    source: LiveServer,
    postgres: EmbeddedPostgres,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
) -> None:
    assert source.engine is not None
    source.run(build_project(source.engine, "live"))
    key = source.create_key("live")
    url = source.settings.database_url
    assert url is not None
    backup = tmp_path / "live.backup"
    with MnemoClient(base_url=source.url, api_key=key) as client:
        for n in range(5):  # adds still arriving while the snapshot is taken
            client.memories.add(f"A note about the garden, number {n}", user_id="u1")
        done = cli(url, "backup", "-o", str(backup))
    assert done.exit_code == 0, done.output
    source.stop()

    target = postgres.new_database("backup_live")
    restored = cli(target, "restore", str(backup))
    assert restored.exit_code == 0, restored.output  # counts checked against the manifest
    settings = gateway_settings(target, tmp_path / "restored")
    server = LiveServer(settings, llm_server).start()
    try:
        assert server.engine is not None
        assert server.run(finds_a_built_memory(server.engine, "live"))
    finally:
        server.stop()


def test_restore_never_overwrites_a_database_by_accident(
    source: LiveServer,
    postgres: EmbeddedPostgres,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
) -> None:
    assert source.engine is not None
    source.run(build_project(source.engine, "kept"))
    source.stop()
    url = source.settings.database_url
    assert url is not None
    backup = tmp_path / "kept.backup"
    assert cli(url, "backup", "-o", str(backup)).exit_code == 0

    occupied = postgres.new_database("backup_occupied")
    other = gateway_settings(occupied, tmp_path / "occupied")
    LiveServer(other, llm_server).start().stop()  # a migrated, other store
    held = fingerprint(occupied)
    refused = cli(occupied, "restore", str(backup))
    assert refused.exit_code == 2
    assert "holds" in refused.output and "--replace" in refused.output
    assert fingerprint(occupied) == held  # nothing was written

    replaced = cli(occupied, "restore", str(backup), "--replace")
    assert replaced.exit_code == 0, replaced.output
    assert fingerprint(occupied) == fingerprint(url)

    not_a_backup = tmp_path / "notes.txt"
    not_a_backup.write_text("hello")
    said = cli(occupied, "restore", str(not_a_backup))
    assert said.exit_code == 2 and "not a mnemo backup" in said.output


def test_a_distributed_restore_leaves_runs_in_flight_retryable(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    # No workers: the adds are acknowledged and stay in flight, as on Kafka at a backup.
    url = postgres.new_database("backup_inflight")
    idle = LiveServer(gateway_settings(url, tmp_path / "a"), llm_server, run_workers=False)
    idle.start()
    key = idle.create_key("inflight")
    with MnemoClient(base_url=idle.url, api_key=key) as client:
        run = client.memories.add("The user keeps two cats", user_id="u1")
    backup = tmp_path / "inflight.backup"
    assert cli(url, "backup", "-o", str(backup)).exit_code == 0
    idle.stop()

    target = postgres.new_database("backup_inflight_dst")
    restored = cli(target, "restore", str(backup), "--distributed")
    assert restored.exit_code == 0, restored.output
    assert run.run_id in restored.output and "retryably" in restored.output
    server = LiveServer(gateway_settings(target, tmp_path / "b"), llm_server).start()
    try:
        with MnemoClient(base_url=server.url, api_key=key) as client:
            failed = client.runs.get(run.run_id)
            assert failed.status == "failed" and failed.error == INTERRUPTED
            client.runs.retry(run.run_id)
            assert client.runs.wait(run.run_id, timeout=120).status == "completed"
    finally:
        server.stop()


def test_embedded_data_dir_round_trip(tmp_path: Path) -> None:
    make_traversable_for_postgres(tmp_path)
    source, target = tmp_path / "source", tmp_path / "target"
    env = {"PYTHONPATH": f"{ROOT / 'libs'}:{ROOT}", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    keys = [sys.executable, "-m", "mnemo.cli.main", "keys", "create", "--init"]
    made = subprocess.run(
        [*keys, "--data-dir", str(source)], env=env, capture_output=True, text=True, timeout=300
    )
    assert made.returncode == 0, made.stderr
    backup = tmp_path / "dir.backup"
    mnemo = [sys.executable, "-m", "mnemo.cli.main"]
    done = subprocess.run(
        [*mnemo, "backup", "--data-dir", str(source), "-o", str(backup)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    restored = subprocess.run(
        [*mnemo, "restore", str(backup), "--data-dir", str(target)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert restored.returncode == 0, restored.stderr
    listed = subprocess.run(
        [*mnemo, "keys", "list", "--data-dir", str(target)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip() != "" and "default" in listed.stdout
