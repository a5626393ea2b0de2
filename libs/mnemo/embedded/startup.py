"""Building an Engine on the embedded transport (what `mnemo serve`, `python -m
mnemo.embedded`, the embedded client and the CLI's key commands start)."""

from __future__ import annotations

from mnemo.clock import Clock
from mnemo.contracts.embedder import Embedder
from mnemo.contracts.llm import LLM
from mnemo.core import start as core_start
from mnemo.core.engine import Engine
from mnemo.embedded.transport import EmbeddedTransport
from mnemo.settings import Settings


async def start_engine(
    settings: Settings,
    *,
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
    run_workers: bool = True,
) -> Engine:
    """Connect (starting embedded Postgres if no URL is set) and, unless told not to,
    start the pipeline workers in this process."""
    return await core_start.start_engine(
        settings,
        lambda database, deps, groups: EmbeddedTransport(deps, groups, settings, database.url),
        pool_size=settings.db_pool_size + settings.workers,
        llm=llm,
        embedder=embedder,
        clock=clock,
        upgrade_bundled_model=True,
        start_transport=run_workers,
    )
