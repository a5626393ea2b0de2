"""One live mnemo for every example of the docs: the product's defaults (the offline
provider, the bundled local embedder) on a fresh database of the session's Postgres."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemo.embedded.startup import start_engine
from mnemo.settings import Settings
from tests.api.fixtures import llm_server
from tests.api.live_server import LiveServer

__all__ = ["docs_server", "llm_server"]


class DocsServer(LiveServer):
    """LiveServer with the product's own providers instead of the scripted LLM and the
    hash embedder: the examples print what a user would see."""

    async def _serve(self, sock: Any) -> None:
        import uvicorn

        from mnemo.gateway.app import create_app

        engine = await start_engine(self.settings)
        self.engine, self._loop = engine, asyncio.get_running_loop()
        try:
            app = create_app(self.settings, engine)
            config = uvicorn.Config(
                app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
            )
            self._server = uvicorn.Server(config)
            await self._server.serve(sockets=[sock])
        finally:
            await engine.close()


@pytest.fixture(scope="session")
def docs_server(postgres: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocsServer]:
    data_dir = Path(tmp_path_factory.mktemp("docs-server"))
    settings = Settings(
        database_url=postgres.new_database("docs"),
        data_dir=data_dir,
        workers=4,
        worker_processes=0,
        db_pool_size=5,
        bus_poll_seconds=0.05,
        buffer_tick_seconds=0.2,
    )
    server = DocsServer(settings, llm_server=None).start()  # type: ignore[arg-type]
    yield server
    server.stop()
