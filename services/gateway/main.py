"""Process shell of the distributed mode's gateway: `python -m services.gateway`, or
`uvicorn services.gateway.main:create --factory`. It serves the Engram API on the Kafka
transport (MNEMO_MODE=distributed; the embedded mode's server is `mnemo serve`). Settings are
read from the environment once, when the factory runs, never at import time."""

from __future__ import annotations

import asyncio

from fastapi import FastAPI

from mnemo.core.engine import Engine
from mnemo.gateway.app import create_app
from mnemo.logs import configure_logging
from mnemo.settings import Settings
from mnemo.tracing.setup import configure as configure_tracing

EMBEDDED = (
    "services.gateway serves the distributed mode: set MNEMO_MODE=distributed (and run the "
    "stage services), or serve the embedded mode with `mnemo serve`"
)


async def start_engine(settings: Settings) -> Engine:
    """The Engine on the Kafka transport; refuses the embedded mode with a clear message."""
    if settings.mode != "distributed":
        raise RuntimeError(EMBEDDED)
    from mnemo.kafka.gateway import start_engine as start_kafka_engine

    return await start_kafka_engine(settings)


def create() -> FastAPI:
    """The uvicorn factory: one Settings object, one app; the engine starts in its lifespan."""
    settings = Settings()
    configure_tracing("mnemo-gateway")
    return create_app(settings, start_engine=start_engine)


def run(settings: Settings | None = None) -> None:
    """Serve the gateway on the configured host and port."""
    settings = settings or Settings()
    if settings.mode != "distributed":
        raise SystemExit(EMBEDDED)
    configure_logging()
    configure_tracing("mnemo-gateway")
    asyncio.run(_serve(settings))


async def _serve(settings: Settings) -> None:
    import uvicorn

    from mnemo.api.connections import uvicorn_config

    engine = await start_engine(settings)
    try:
        config = uvicorn_config(create_app(settings, engine), settings, log_level="info")
        await uvicorn.Server(config).serve()
    finally:
        await engine.close()
