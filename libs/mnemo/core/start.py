"""Starting an Engine, the same for both transports: connect, build the dependency
bundle and the group cache, put the transport under the facade, start it. A start that
fails closes what it opened."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mnemo.clock import Clock
from mnemo.contracts.embedder import Embedder
from mnemo.contracts.llm import LLM
from mnemo.core.connect import open_deps
from mnemo.core.engine import Engine
from mnemo.core.groups import GroupCache
from mnemo.core.transport import RunTransport
from mnemo.settings import Settings
from mnemo.store.database import Database

if TYPE_CHECKING:
    from mnemo.deps import Deps

# Builds the transport from what the engine opened (the embedded one needs the database's
# URL for its notifications; the Kafka one only the pool).
TransportFactory = Callable[[Database, "Deps", GroupCache], RunTransport]


async def start_engine(
    settings: Settings,
    make_transport: TransportFactory,
    *,
    pool_size: int,
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
    upgrade_bundled_model: bool = False,
    start_transport: bool = True,
) -> Engine:
    """An Engine on the transport `make_transport` builds; providers not given are made
    from `settings`. `start_transport=False` leaves the transport stopped (tests drive it)."""
    database, deps = await open_deps(
        settings,
        pool_size=pool_size,
        llm=llm,
        embedder=embedder,
        clock=clock,
        upgrade_bundled_model=upgrade_bundled_model,
    )
    groups = GroupCache(deps.db, deps.clock, settings.default_template)
    engine = Engine(settings, database, deps, groups, make_transport(database, deps, groups))
    if start_transport:
        try:
            await engine.transport.start()
        except BaseException:
            await engine.close()
            raise
    return engine
