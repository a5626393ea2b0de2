"""The gateway in distributed mode: the Engine on the Kafka transport (no pipeline workers).

`python -m services.gateway` serves the API with it on MNEMO_HOST:MNEMO_PORT
(MNEMO_MODE=distributed).
"""

from __future__ import annotations

from mnemo.clock import Clock
from mnemo.contracts.embedder import Embedder
from mnemo.contracts.llm import LLM
from mnemo.core import start as core_start
from mnemo.core.engine import Engine
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
    return await core_start.start_engine(
        settings,
        lambda _database, deps, _groups: KafkaTransport(settings.kafka, deps.db),
        pool_size=settings.db_pool_size,
        llm=llm,
        embedder=embedder,
        clock=clock,
    )
