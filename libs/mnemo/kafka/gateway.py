"""The gateway in distributed mode: the engine without workers, submitting to Kafka.

`python -m mnemo.kafka.gateway` serves the API on MNEMO_HOST:MNEMO_PORT; `services.gateway`
can call `start_engine` / `close_engine` instead of starting embedded workers.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mnemo.engine.engine import Engine
from mnemo.kafka.settings import KafkaSettings
from mnemo.kafka.submitter import KafkaRunSubmitter
from mnemo.settings import Settings


async def start_engine(
    settings: Settings, ks: KafkaSettings | None = None, **engine_kwargs: Any
) -> Engine:
    """An Engine that records runs in Postgres and publishes them to the raw topic."""
    submitter = KafkaRunSubmitter(ks or KafkaSettings())
    engine = await Engine.start(settings, run_workers=False, submitter=submitter, **engine_kwargs)
    try:
        await submitter.start(engine.database.engine)
    except BaseException:
        await engine.close()
        raise
    return engine


async def close_engine(engine: Engine) -> None:
    if isinstance(engine.submitter, KafkaRunSubmitter):
        await engine.submitter.close()
    await engine.close()


async def serve(settings: Settings) -> None:
    import uvicorn

    from mnemo.api import create_app

    engine = await start_engine(settings)
    try:
        config = uvicorn.Config(
            create_app(settings, engine), host=settings.host, port=settings.port, log_level="info"
        )
        await uvicorn.Server(config).serve()
    finally:
        await close_engine(engine)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    asyncio.run(serve(Settings()))


if __name__ == "__main__":
    main()
