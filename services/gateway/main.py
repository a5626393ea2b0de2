"""Process shell of the gateway: `uvicorn services.gateway.main:create --factory`.

Settings are read from the environment once, when the factory runs, never at import time.
"""

from __future__ import annotations

from fastapi import FastAPI

from mnemo.api import create_app
from mnemo.settings import Settings


def create() -> FastAPI:
    """The uvicorn factory: one Settings object, one app; the engine starts in its lifespan."""
    return create_app(Settings())


def run(settings: Settings | None = None) -> None:
    """Serve the gateway on the configured host and port: with embedded workers, or (with
    MNEMO_MODE=distributed) publishing adds to Kafka for the stage services."""
    settings = settings or Settings()
    if settings.mode == "distributed":
        import asyncio

        from mnemo.kafka.gateway import serve

        asyncio.run(serve(settings))
        return
    import uvicorn

    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info")
