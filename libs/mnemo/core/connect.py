"""Opening what every process of either mode needs: the database and the providers."""

from __future__ import annotations

import asyncio
import logging

from mnemo.clock import Clock, SystemClock
from mnemo.contracts.embedder import Embedder
from mnemo.contracts.llm import LLM
from mnemo.core.model_upgrade import bundled_model_changed, upgradable, upgrade_to_bundled
from mnemo.deps import Deps
from mnemo.settings import Settings
from mnemo.store.database import Database, connect
from mnemo.store.embedder_identity import EmbedderMismatch

log = logging.getLogger(__name__)


async def open_deps(
    settings: Settings,
    *,
    pool_size: int,
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
    connect_attempts: int = 1,
    upgrade_bundled_model: bool = False,
) -> tuple[Database, Deps]:
    """Connect (starting embedded Postgres if no URL is set, migrating to head) and build
    the dependency bundle. Providers not given are made from `settings`; a local embedding
    model is loaded now, not inside the first request. `connect_attempts` > 1 waits for a
    database that is still starting (services started together), a second apart.
    `upgrade_bundled_model` (the embedded mode): a database of an earlier bundled model is
    converted to the bundled one rather than refused (`core.model_upgrade`)."""
    if embedder is None:
        from mnemo.embeddings.factory import embedder_from_settings

        embedder = embedder_from_settings(settings)
    if llm is None:
        from mnemo.llm.factory import llm_from_settings

        llm = llm_from_settings(settings, embedder)
    warm_up = getattr(embedder, "warm_up", None)
    if warm_up is not None:
        await warm_up()
    try:
        database = await _connect(settings, embedder.dim, embedder, pool_size, connect_attempts)
    except EmbedderMismatch as refusal:
        if not upgradable(refusal, embedder):
            raise
        if not upgrade_bundled_model:
            raise bundled_model_changed(refusal) from refusal
        converting = await _connect(settings, embedder.dim, None, 1, connect_attempts)
        try:
            await upgrade_to_bundled(converting.db, embedder, refusal)
        finally:
            await converting.close()
        database = await _connect(settings, embedder.dim, embedder, pool_size, connect_attempts)
    deps = Deps(
        db=database.db, llm=llm, embedder=embedder, clock=clock or SystemClock(), settings=settings
    )
    log.info("mnemo: llm=%s embedder=%s", llm.label, embedder.label)
    return database, deps


async def _connect(
    settings: Settings, dim: int, embedder: Embedder | None, pool_size: int, attempts: int
) -> Database:
    for attempt in range(1, attempts + 1):
        try:
            return await connect(
                settings.database_url,
                settings.data_dir,
                dim,
                pool_size,
                settings.hnsw_ef_search,
                embedder,
                settings.db_connect_timeout_seconds,
                settings.db_statement_timeout_seconds,
            )
        except EmbedderMismatch:
            raise
        except Exception as exc:
            if attempt == attempts:
                raise
            log.warning("database not ready (%s); retrying", exc)
            await asyncio.sleep(1.0)
    raise AssertionError("unreachable: attempts >= 1")
