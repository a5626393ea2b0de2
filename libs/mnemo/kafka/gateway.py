"""The gateway in distributed mode: the Engine on the Kafka transport (no pipeline workers).

`python -m mnemo.kafka.gateway` serves the API on MNEMO_HOST:MNEMO_PORT; `services.gateway`
does the same with MNEMO_MODE=distributed.
"""

from __future__ import annotations

import asyncio

from mnemo.clock import Clock
from mnemo.core import start as core_start
from mnemo.core.engine import Engine
from mnemo.embeddings.base import Embedder
from mnemo.kafka.transport import KafkaTransport
from mnemo.llm.base import LLM
from mnemo.logs import configure_logging
from mnemo.settings import Settings
from mnemo.tracing.setup import configure as configure_tracing


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


async def serve(settings: Settings) -> None:
    import uvicorn

    from mnemo.api import create_app
    from mnemo.api.connections import uvicorn_config

    engine = await start_engine(settings)
    try:
        config = uvicorn_config(create_app(settings, engine), settings, log_level="info")
        await uvicorn.Server(config).serve()
    finally:
        await engine.close()


def main() -> None:
    configure_logging()
    settings = Settings()
    configure_tracing("mnemo-gateway")
    asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
