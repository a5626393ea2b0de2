"""The gateway in distributed mode: the Engine on the Kafka transport (no pipeline workers).

`python -m services.gateway` serves the API with it on MNEMO_HOST:MNEMO_PORT
(MNEMO_MODE=distributed).
"""

from __future__ import annotations

from mnemo.clock import Clock
from mnemo.contracts.embedder import Embedder
from mnemo.contracts.llm import LLM
from mnemo.core.connect import open_deps
from mnemo.core.engine import Engine
from mnemo.core.groups import GroupCache
from mnemo.kafka.transport import KafkaTransport
from mnemo.settings import Settings


async def start_engine(
    settings: Settings,
    *,
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
) -> Engine:
    """An Engine that records runs in Postgres and publishes them to the raw channel."""
    database, deps = await open_deps(
        settings, pool_size=settings.db_pool_size, llm=llm, embedder=embedder, clock=clock
    )
    transport = KafkaTransport(settings.kafka, deps.db)
    groups = GroupCache(deps.db, deps.clock, settings.default_template)
    engine = Engine(settings, database, deps, groups, transport)
    try:
        await transport.start()
    except BaseException:
        await engine.close()
        raise
    return engine
