"""What a stage service holds: its topics, its lazily opened dependencies, and `emit`."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import faust

from mnemo import metrics
from mnemo.clock import SystemClock
from mnemo.engine.groups import GroupCache
from mnemo.events.codec import encode
from mnemo.events.topics import TopicKind
from mnemo.kafka.settings import KafkaSettings
from mnemo.kafka.topics import topic_names, wanted
from mnemo.settings import Settings
from mnemo.stages.routing import Emit
from mnemo.steps.base import Deps
from mnemo.store.database import Database, connect

log = logging.getLogger(__name__)


class Runtime:
    """One per service process. Dependencies open on first use (inside the running loop)."""

    def __init__(self, service: str, ks: KafkaSettings, app: faust.App) -> None:
        self.service = service
        self.ks = ks
        self.app = app
        self.names = topic_names(ks)
        parts = wanted(ks)
        self.topics: dict[TopicKind, Any] = {
            kind: app.topic(
                self.names.name(kind),
                key_type=bytes,
                value_type=bytes,
                key_serializer="raw",
                value_serializer="raw",
                partitions=parts[self.names.name(kind)][0],
            )
            for kind in TopicKind
        }
        self._deps: Deps | None = None
        self._groups: GroupCache | None = None
        self._database: Database | None = None
        self._lock = asyncio.Lock()

    async def deps(self) -> Deps:
        async with self._lock:
            if self._deps is None:
                self._deps = await self._open(Settings())
        return self._deps

    async def groups(self) -> GroupCache:
        deps = await self.deps()
        if self._groups is None:
            self._groups = GroupCache(deps.db, deps.clock)
        return self._groups

    async def _open(self, settings: Settings) -> Deps:
        from mnemo.embeddings.factory import embedder_from_settings
        from mnemo.llm.factory import llm_from_settings

        embedder = embedder_from_settings(settings)
        llm = llm_from_settings(settings, embedder)
        for attempt in range(30):  # services may start together on a database being migrated
            try:
                self._database = await connect(
                    settings.database_url,
                    settings.data_dir,
                    embedder.dim,
                    settings.db_pool_size,
                    settings.hnsw_ef_search,
                )
                break
            except Exception as exc:
                if attempt == 29:
                    raise
                log.warning("database not ready (%s); retrying", exc)
                await asyncio.sleep(1.0)
        assert self._database is not None
        log.info("%s: llm=%s embedder=%s", self.service, llm.label, embedder.label)
        return Deps(
            db=self._database.engine,
            llm=llm,
            embedder=embedder,
            clock=SystemClock(),
            settings=settings,
        )

    async def emit(self, emits: list[Emit]) -> None:
        """Publish in order and wait until the broker acknowledged every record."""
        pending = []
        for e in emits:
            topic = self.topics[e.kind]
            pending.append(await topic.send(key=e.key.encode(), value=encode(e.record)))
            metrics.RECORDS_OUT.labels(stage=e.kind.value).inc()
        if pending:
            await asyncio.gather(*pending)

    async def close(self) -> None:
        if self._deps is not None:
            await self._deps.aclose()
        if self._database is not None:
            await self._database.close()
