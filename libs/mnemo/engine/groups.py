"""Group lookup with a short-lived cache; the `default` group is created on first use."""

from __future__ import annotations

import asyncio
import time

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import NotFound
from mnemo.domain.templates import group_from_template
from mnemo.store import groups as group_store

DEFAULT_GROUP = "default"
_TTL_SECONDS = 2.0


class GroupCache:
    def __init__(self, db: AsyncEngine, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self._cache: dict[tuple[str, str], tuple[float, GroupConfig]] = {}
        self._loading: dict[tuple[str, str], asyncio.Future[GroupConfig]] = {}

    async def get(self, project: str, name: str) -> GroupConfig:
        cached = self._cache.get((project, name))
        if cached and time.monotonic() - cached[0] < _TTL_SECONDS:
            return cached[1]
        # Single flight: when the entry expires under load, one query refreshes it for all.
        loading = self._loading.get((project, name))
        if loading is not None:
            return await asyncio.shield(loading)
        future: asyncio.Future[GroupConfig] = asyncio.get_running_loop().create_future()
        self._loading[(project, name)] = future
        try:
            group = await self._load(project, name)
            future.set_result(group)
            return group
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here, so an unshared failure is not logged
            raise
        finally:
            del self._loading[(project, name)]

    async def _load(self, project: str, name: str) -> GroupConfig:
        async with self.db.begin() as conn:
            group = await group_store.get(conn, project, name)
            if group is None and name == DEFAULT_GROUP:
                group = group_from_template(DEFAULT_GROUP, "default")
                await group_store.create_if_absent(conn, project, group, self.clock.now())
        if group is None:
            raise NotFound(f"group '{name}' does not exist in this project")
        self._cache[(project, name)] = (time.monotonic(), group)
        return group

    async def put(self, project: str, group: GroupConfig) -> None:
        async with self.db.begin() as conn:
            await group_store.put(conn, project, group, self.clock.now())
        self._cache[(project, group.name)] = (time.monotonic(), group)

    async def list(self, project: str) -> list[GroupConfig]:
        await self.get(project, DEFAULT_GROUP)
        async with self.db.connect() as conn:
            return await group_store.list_(conn, project)
