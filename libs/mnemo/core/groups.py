"""Group lookup with a short-lived cache; the `default` group is created on first use."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.core.ttl_cache import TTLCache
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
        self._cache: TTLCache[tuple[str, str], GroupConfig] = TTLCache(_TTL_SECONDS)

    async def get(self, project: str, name: str) -> GroupConfig:
        return await self._cache.get((project, name), lambda: self._load(project, name))

    async def _load(self, project: str, name: str) -> GroupConfig:
        async with self.db.begin() as conn:
            group = await group_store.get(conn, project, name)
            if group is None and name == DEFAULT_GROUP:
                group = group_from_template(DEFAULT_GROUP, "default")
                await group_store.create_if_absent(conn, project, group, self.clock.now())
        if group is None:
            raise NotFound(f"group '{name}' does not exist in this project")
        return group

    async def put(self, project: str, group: GroupConfig) -> None:
        async with self.db.begin() as conn:
            await group_store.put(conn, project, group, self.clock.now())
        self._cache.put((project, group.name), group)

    async def list(self, project: str) -> list[GroupConfig]:
        await self.get(project, DEFAULT_GROUP)
        async with self.db.connect() as conn:
            return await group_store.list_(conn, project)
