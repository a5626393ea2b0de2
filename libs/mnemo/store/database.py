"""Connecting to Postgres: an external server by URL, or the embedded one from `pgserver`."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from mnemo.store.data_dir import guard_pgserver_permissions, prepare_data_dir

log = logging.getLogger(__name__)
_MIGRATIONS = Path(__file__).parent / "migrations"
EMBEDDED_MAX_CONNECTIONS = 400


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


def start_embedded(data_dir: Path) -> tuple[Any, str]:
    """Start (or join) Postgres 16 with pgvector from the `pgserver` package in `data_dir`."""
    try:
        import pgserver
    except ImportError as exc:  # pragma: no cover - it is a core dependency
        raise RuntimeError("the embedded database needs `pip install pgserver`") from exc
    pg_dir = data_dir / "pg"
    prepare_data_dir(pg_dir)
    guard_pgserver_permissions(pgserver)
    # "stop": the server stops when the last process using this data folder lets go of it.
    server = pgserver.get_server(str(pg_dir), cleanup_mode="stop")
    if _max_connections(server) < EMBEDDED_MAX_CONNECTIONS:
        # pgserver's default (100) is too few for many workers; raising it needs a restart,
        # which happens once per data folder and only if no other process is using it.
        server.psql(f"ALTER SYSTEM SET max_connections = {EMBEDDED_MAX_CONNECTIONS};")
        server.cleanup()
        server = pgserver.get_server(str(pg_dir), cleanup_mode="stop")
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    return server, server.get_uri()


def _max_connections(server: Any) -> int:
    out = server.psql("SHOW max_connections;")
    return int(next(line.strip() for line in out.splitlines() if line.strip().isdigit()))


def migrate(url: str, embedding_dim: int, revision: str = "head") -> None:
    """Bring the schema to `revision` (head by default). Safe to call on every start."""
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", _async_url(url))
    cfg.attributes["embedding_dim"] = embedding_dim
    command.upgrade(cfg, revision)


async def connect(
    database_url: str | None,
    data_dir: Path,
    embedding_dim: int,
    pool_size: int,
    hnsw_ef_search: int,
) -> Database:
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
        # Every session, so reconciliation's lookups get the same recall as searches.
        connect_args={"options": f"-c hnsw.ef_search={int(hnsw_ef_search)}"},
    )
    async with db.connect() as conn:
        stored = (
            await conn.execute(text("SELECT value FROM settings_meta WHERE key = 'embedding_dim'"))
        ).scalar_one()
    if int(stored) != embedding_dim:
        await db.dispose()
        raise RuntimeError(
            f"the database stores {stored}-dimensional embeddings but the configured embedder "
            f"makes {embedding_dim}; use the same embedder or a fresh database"
        )
    return Database(db=db, url=database_url, embedded=embedded)
