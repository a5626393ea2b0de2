"""Backups of the store: one file holding pg_dump's custom-format dump of the whole
database and a manifest (`manifest.json`) with the schema revision and every table's row
count, all read in the dump's own snapshot.

The database is the whole of mnemo's state in embedded mode (memories, runs, the bus,
buffers, keys). In distributed mode the runs in flight at the backup live on Kafka too (in
its topics and the buffer service's changelog), which moved on since: a distributed restore
starts the stages on empty topics and fails those runs with a retryable note
(`fail_unfinished`); each keeps its raw input, so `POST /v1/runs/{id}/retry` re-drives it.

The dump runs against a live server: pg_dump reads one exported snapshot, the one in which
the manifest's counts were taken, so a restore is checked table by table against them.
The tools are the pg_dump/pg_restore shipped with the embedded Postgres (16), unless
`pg_bin` names another folder (an external server newer than 16 needs its own).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from mnemo import __version__

FORMAT = "mnemo-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DUMP = "database.dump"
# Tables of every schema but Postgres's own; pgvector adds functions and types, no tables.
_TABLES = """
    SELECT quote_ident(schemaname) || '.' || quote_ident(tablename)
    FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
    ORDER BY 1
"""


class BackupError(RuntimeError):
    """A backup or restore that cannot be done, with what to do instead."""


@dataclass(frozen=True)
class Manifest:
    schema_revision: str | None
    tables: dict[str, int]
    postgres_version: int
    mnemo_version: str = __version__
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    format: str = FORMAT
    version: int = FORMAT_VERSION

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Manifest:
        if data.get("format") != FORMAT:
            raise BackupError("not a mnemo backup (its manifest is not a mnemo-backup's)")
        if int(data.get("version", 0)) > FORMAT_VERSION:
            raise BackupError("the backup is of a newer format than this mnemo reads")
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class Restored:
    manifest: Manifest
    tables: dict[str, int]
    seconds: float


def pg_tool(name: str, pg_bin: Path | None = None) -> Path:
    """The `name` binary: from `pg_bin`, else the embedded Postgres's, else the PATH's."""
    if pg_bin is not None:
        found = pg_bin / name
        if not found.exists():
            raise BackupError(f"{found} does not exist (--pg-bin names the folder of {name})")
        return found
    from mnemo.store.database import EMBEDDED_POSTGRES_MAJOR, pgserver_module

    package = Path(pgserver_module().__file__).parent
    bundled = package / "pginstall" / "bin" / name
    if bundled.exists():
        return bundled
    on_path = shutil.which(name)
    if on_path is None:
        raise BackupError(
            f"no {name} found: the embedded Postgres {EMBEDDED_POSTGRES_MAJOR} package ships "
            "none here; install the PostgreSQL client tools or name them with --pg-bin"
        )
    return Path(on_path)


def plain_url(url: str) -> str:
    """A libpq URL (SQLAlchemy's driver suffix removed)."""
    for prefix in ("postgresql+psycopg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix) :]
    return url


async def table_counts(conn: psycopg.AsyncConnection[Any]) -> dict[str, int]:
    tables = [row[0] for row in await (await conn.execute(_TABLES)).fetchall()]
    counts: dict[str, int] = {}
    for table in tables:  # names come from the catalogue, quoted by quote_ident
        row = await (await conn.execute(f"SELECT count(*) FROM {table}")).fetchone()
        counts[table] = int(row[0]) if row else 0
    return counts


async def _revision(conn: psycopg.AsyncConnection[Any]) -> str | None:
    exists = await (await conn.execute("SELECT to_regclass('public.alembic_version')")).fetchone()
    if not exists or exists[0] is None:
        return None
    row = await (await conn.execute("SELECT version_num FROM alembic_version")).fetchone()
    return None if row is None else str(row[0])


async def _run(*args: str | Path) -> None:
    process = await asyncio.create_subprocess_exec(
        *map(str, args), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await process.communicate()
    if process.returncode != 0:
        said = (err or out).decode(errors="replace").strip().splitlines()
        raise BackupError(f"{Path(str(args[0])).name} failed: {' / '.join(said[-3:])}")


async def create_backup(url: str, target: Path, pg_bin: Path | None = None) -> Manifest:
    """Write a backup of the database at `url` to `target` (a file; replaced only once the
    new one is complete)."""
    url = plain_url(url)
    pg_dump = pg_tool("pg_dump", pg_bin)
    with tempfile.TemporaryDirectory(prefix="mnemo-backup-") as work:
        dump = Path(work) / DUMP
        async with await psycopg.AsyncConnection.connect(url) as conn:
            # One snapshot for the counts and the dump: the manifest describes the dump.
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            snapshot = await (await conn.execute("SELECT pg_export_snapshot()")).fetchone()
            assert snapshot is not None
            manifest = Manifest(
                schema_revision=await _revision(conn),
                tables=await table_counts(conn),
                postgres_version=conn.info.server_version,
            )
            await _run(
                pg_dump, "--format=custom", "--no-owner", "--no-privileges",
                f"--snapshot={snapshot[0]}", f"--file={dump}", f"--dbname={url}",
            )  # fmt: skip
            await conn.rollback()
        (Path(work) / MANIFEST).write_text(json.dumps(asdict(manifest), indent=2))
        partial = target.with_name(target.name + ".partial")
        with tarfile.open(partial, "w") as archive:
            archive.add(Path(work) / MANIFEST, MANIFEST)
            archive.add(dump, DUMP)
        partial.replace(target)
    return manifest


def read_manifest(source: Path) -> Manifest:
    try:
        with tarfile.open(source) as archive:
            member = archive.extractfile(MANIFEST)
            if member is None:
                raise KeyError(MANIFEST)
            return Manifest.parse(json.loads(member.read()))
    except (tarfile.TarError, KeyError, json.JSONDecodeError) as exc:
        raise BackupError(f"{source} is not a mnemo backup ({exc})") from exc


async def restore_backup(
    source: Path, url: str, pg_bin: Path | None = None, replace: bool = False
) -> Restored:
    """Restore `source` into the database at `url`, which must hold no tables unless
    `replace` (then its schema `public` is dropped first). Every table's row count is
    checked against the manifest; a mismatch raises BackupError."""
    started = time.monotonic()
    manifest = read_manifest(source)
    url = plain_url(url)
    pg_restore = pg_tool("pg_restore", pg_bin)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        held = await table_counts(conn)
        if held and not replace:
            raise BackupError(
                f"the target database holds {len(held)} tables: restore into an empty "
                "database or data dir, or pass --replace to drop what it holds"
            )
        if held:
            await conn.execute("DROP SCHEMA public CASCADE")
            await conn.execute("CREATE SCHEMA public")
    with tempfile.TemporaryDirectory(prefix="mnemo-restore-") as work:
        with tarfile.open(source) as archive:
            member = archive.getmember(DUMP)
            dump = archive.extractfile(member)
            if dump is None:
                raise BackupError(f"{source} holds no database dump")
            path = Path(work) / DUMP
            with path.open("wb") as out:
                shutil.copyfileobj(dump, out)
        await _run(
            pg_restore, "--no-owner", "--no-privileges", "--exit-on-error",
            "--single-transaction", f"--dbname={url}", path,
        )  # fmt: skip
    async with await psycopg.AsyncConnection.connect(url) as conn:
        counts = await table_counts(conn)
    if counts != manifest.tables:
        differ = sorted(t for t in manifest.tables.keys() | counts.keys()
                        if manifest.tables.get(t) != counts.get(t))  # fmt: skip
        raise BackupError(f"the restored tables differ from the backup's manifest: {differ}")
    return Restored(manifest=manifest, tables=counts, seconds=time.monotonic() - started)


INTERRUPTED = (
    "interrupted: restored from a backup taken while this run was in flight; retry it "
    "(POST /v1/runs/{run_id}/retry)"
)


async def fail_unfinished(url: str) -> list[str]:
    """Fail the runs that were running or buffered at the backup (distributed restores:
    their records are not on the new topics), and drop what an embedded bus or buffer still
    held for them, so that only a retry re-drives them. Returns their ids."""
    async with await psycopg.AsyncConnection.connect(plain_url(url)) as conn:
        rows = await (
            await conn.execute(
                "UPDATE runs SET status = 'failed', error = %s, updated_at = now() "
                "WHERE status IN ('running', 'in_buffer') RETURNING run_id",
                (INTERRUPTED,),
            )
        ).fetchall()
        await conn.execute("DELETE FROM bus_records")
        await conn.execute("DELETE FROM buffer_items")
        await conn.commit()
    return sorted(str(row[0]) for row in rows)
