"""`EmbeddedClient`: the async client API over an in-process Engine, with no server.

For notebooks and tests. It builds requests with the same code as the HTTP clients and
raises the same typed errors.

    async with await EmbeddedClient.start(Settings(data_dir=...)) as client:
        run = await client.memories.add("I live in Lisbon", user_id="ana")
"""

from __future__ import annotations

from typing import Any

from mnemo.client.engine_client import EngineClient
from mnemo.core.engine import Engine
from mnemo.embedded.startup import start_engine
from mnemo.settings import Settings


class EmbeddedClient(EngineClient):
    """The AsyncMnemoClient API against an Engine in this process (owned or borrowed)."""

    def __init__(
        self, engine: Engine, *, project: str | None = None, owns_engine: bool = False
    ) -> None:
        super().__init__(engine, project=project)
        self._owns_engine = owns_engine

    @classmethod
    async def start(
        cls, settings: Settings | None = None, *, project: str | None = None, **engine_options: Any
    ) -> EmbeddedClient:
        """Start an Engine (workers included) that `close()` will stop.

        `engine_options` go to `mnemo.embedded.startup.start_engine` (llm=, embedder=,
        clock=, run_workers=).
        """
        engine = await start_engine(settings or Settings(), **engine_options)
        return cls(engine, project=project, owns_engine=True)

    async def close(self) -> None:
        if self._owns_engine:
            await self.engine.close()

    async def __aenter__(self) -> EmbeddedClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
