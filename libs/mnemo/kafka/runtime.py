"""What a stage service holds: its channels, its dependencies, and `emit`.

`open` connects the database and loads the models; the service calls it before its worker
joins the consumer group, so no record waits for a cold start (`mnemo.kafka.worker`)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import faust

from mnemo import metrics
from mnemo.clock import Clock, SystemClock
from mnemo.core.connect import open_deps
from mnemo.core.failures import describe
from mnemo.core.groups import GroupCache
from mnemo.core.heartbeat import HeartbeatWriter
from mnemo.deps import Deps
from mnemo.kafka.channels import channel_names, wanted
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.codec import encode
from mnemo.kafka.installation import HEADER as INSTALLATION_HEADER
from mnemo.kafka.installation import check_for_stage
from mnemo.kafka.stages.routing import Emit
from mnemo.kafka.timers import guarded, transient_waits
from mnemo.settings import Settings
from mnemo.store.database import Database
from mnemo.tracing import spans

log = logging.getLogger(__name__)
DATABASE_WAIT_SECONDS = 30  # services may start together with a database being migrated


class Runtime:
    """One per service process. Dependencies open in `open` (or on first use), inside the
    event loop the faust worker runs."""

    def __init__(
        self, service: str, settings: Settings, app: faust.App, clock: Clock | None = None
    ) -> None:
        self.service = service
        self.clock = clock or SystemClock()
        self.settings = settings
        self.ks = settings.kafka
        self.app = app
        self.names = channel_names(self.ks)
        parts = wanted(self.ks)
        self.channels: dict[ChannelKind, Any] = {
            kind: app.topic(
                self.names.name(kind),
                key_type=bytes,
                value_type=bytes,
                key_serializer="raw",
                value_serializer="raw",
                partitions=parts[self.names.name(kind)][0],
            )
            for kind in ChannelKind
        }
        self._deps: Deps | None = None
        self._groups: GroupCache | None = None
        self._database: Database | None = None
        self._lock = asyncio.Lock()
        self._heartbeat: HeartbeatWriter | None = None
        self.installation_id: str | None = None  # set by `open`, stamped on every record
        beat = guarded(f"{service}: heartbeat timer", *transient_waits(settings))(self.beat)
        app.timer(settings.heartbeat_seconds)(beat)

    async def beat(self) -> None:
        """Record this service's heartbeat (what the gateway's /readyz reads)."""
        try:
            if self._heartbeat is None:
                deps = await self.deps()
                self._heartbeat = HeartbeatWriter(
                    deps.db, self.service, self.settings.heartbeat_seconds
                )
            await self._heartbeat.beat()
        except Exception as exc:  # the next beat tries again; /readyz sees the gap
            log.warning("%s: heartbeat not written (%s)", self.service, describe(exc, 300))

    async def open(self) -> None:
        """Open the dependencies now: database reachable, models loaded, and the database
        its gateway's, for these topics (else `WrongInstallation`: the stage must not join
        its group)."""
        groups = await self.groups()
        self.installation_id = await check_for_stage(groups.db, self.ks, self.service)

    async def deps(self) -> Deps:
        async with self._lock:
            if self._deps is None:
                self._database, self._deps = await open_deps(
                    self.settings,
                    pool_size=self.settings.db_pool_size,
                    clock=self.clock,
                    connect_attempts=DATABASE_WAIT_SECONDS,
                )
                log.info("%s: dependencies open", self.service)
        return self._deps

    async def groups(self) -> GroupCache:
        deps = await self.deps()
        if self._groups is None:
            self._groups = GroupCache(deps.db, deps.clock, deps.settings.default_template)
        return self._groups

    async def emit(self, emits: list[Emit]) -> None:
        """Publish in order and wait until the broker acknowledged every record."""
        pending = []
        headers = spans.to_headers(spans.carrier())  # the records continue this trace
        if self.installation_id is not None:
            headers.append((INSTALLATION_HEADER, self.installation_id.encode()))
        for e in emits:
            channel = self.channels[e.kind]
            pending.append(
                await channel.send(
                    key=e.scope_key.encode(), value=encode(e.record), headers=headers or None
                )
            )
            metrics.RECORDS_OUT.labels(service=self.service, channel=e.kind.value).inc()
        if pending:
            await asyncio.gather(*pending)

    async def close(self) -> None:
        if self._heartbeat is not None:
            await self._heartbeat.forget()
        if self._deps is not None:
            await self._deps.aclose()
        if self._database is not None:
            await self._database.close()
