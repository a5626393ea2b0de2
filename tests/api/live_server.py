"""A real mnemo gateway on 127.0.0.1 in a background thread, for HTTP-level tests.

The thread owns its event loop, its Engine (workers included) and a uvicorn server, so
sync SDK calls made from a test never block the server. Pipeline LLM calls go to a
ScriptedLLMServer in echo mode (deterministic "User said: ..." memories).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import uvicorn

from mnemo.api.connections import uvicorn_config
from mnemo.core.engine import Engine
from mnemo.embedded.postgres_watch import watch_embedded_postgres
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.gateway.app import create_app
from mnemo.llm.openai_client import OpenAICompatibleLLM
from mnemo.settings import Settings
from tests.support.scripted_llm import ScriptedLLMServer

T = TypeVar("T")


def gateway_settings(database_url: str, data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "database_url": database_url,
        "data_dir": data_dir,
        "embedding_provider": "hash",
        "embedding_dim": 384,
        # reconcile's floor on the hash embedder's scale (the default is the bundled model's)
        "reconcile_min_similarity": 0.3,
        "workers": 4,
        "db_pool_size": 5,
        "bus_poll_seconds": 0.05,
        "buffer_tick_seconds": 0.2,
        "max_body_bytes": 64 * 1024,
        # Two calls (extract, then transform_with_context), which the tests script one by one;
        # the combined call has its own tests (tests/integration/engine/test_extract_reconcile.py).
        "extract_reconcile_max_chars": 0,
        **overrides,
    }
    return Settings(**values)  # type: ignore[arg-type]


def scripted_llm(server: ScriptedLLMServer) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        base_url=server.base_url,
        api_key="test",
        model="scripted",
        max_attempts=2,
        retry_wait_scale=0,
    )


@dataclass
class LiveServer:
    settings: Settings
    llm_server: ScriptedLLMServer
    run_workers: bool = True
    watch_postgres: bool = False  # restart an embedded Postgres that dies, as `mnemo serve`
    url: str = ""
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None
    engine: Engine | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _error: list[BaseException] = field(default_factory=list)

    def start(self) -> LiveServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._thread = threading.Thread(
            target=self._run, args=(sock,), daemon=True, name="mnemo-live-server"
        )
        self._thread.start()
        deadline = time.monotonic() + 60
        while not (self._server and self._server.started):
            if self._error:
                raise RuntimeError("the live server failed to start") from self._error[0]
            if time.monotonic() > deadline:
                raise RuntimeError("the live server did not start within 60 s")
            time.sleep(0.05)
        return self

    def _run(self, sock: socket.socket) -> None:
        try:
            asyncio.run(self._serve(sock))
        except BaseException as exc:  # surfaced by start()
            self._error.append(exc)

    async def _serve(self, sock: socket.socket) -> None:
        engine = await start_engine(
            self.settings,
            llm=scripted_llm(self.llm_server),
            embedder=HashEmbedder(384),
            run_workers=self.run_workers,
        )
        self.engine, self._loop = engine, asyncio.get_running_loop()
        watch = None
        if self.watch_postgres:
            watch = asyncio.create_task(watch_embedded_postgres(engine.database, self._error_out))
        try:
            app = create_app(self.settings, engine)
            config = uvicorn_config(
                app, self.settings, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
            )
            self._server = uvicorn.Server(config)
            await self._server.serve(sockets=[sock])
        finally:
            if watch is not None:
                watch.cancel()
            await engine.close()

    def _error_out(self, reason: str) -> None:
        self._error.append(RuntimeError(reason))

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` in the server's loop (where its engine lives) and return its result."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=30)

    def create_key(
        self, project: str, name: str = "test", *, writable: bool = True, user_id: str | None = None
    ) -> str:
        """A new API key for `project` (read-only, or bound to one user, on request), made
        by the server's own engine, in its loop."""
        assert self._loop is not None and self.engine is not None
        making = self.engine.create_key(project, name, writable=writable, user_id=user_id)
        future = asyncio.run_coroutine_threadsafe(making, self._loop)
        return future.result(timeout=30)[1]
