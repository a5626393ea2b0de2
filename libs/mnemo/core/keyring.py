"""API keys: create, list, revoke, and the cached lookup every request makes."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.core.ttl_cache import TTLCache
from mnemo.store import keys

KEY_CACHE_SECONDS = 5.0


@dataclass
class KeyRing:
    db: AsyncEngine
    clock: Clock
    _cache: TTLCache[str, str | None] = field(default_factory=lambda: TTLCache(KEY_CACHE_SECONDS))

    async def create(self, project: str, name: str) -> tuple[keys.ApiKey, str]:
        """The stored key and its secret (shown once, never stored)."""
        async with self.db.begin() as conn:
            return await keys.create(conn, project, name, self.clock.now())

    async def list(self, project: str | None = None) -> list[keys.ApiKey]:
        async with self.db.connect() as conn:
            return await keys.list_(conn, project)

    async def revoke(self, key_id: str) -> bool:
        async with self.db.begin() as conn:
            revoked = await keys.revoke(conn, key_id, self.clock.now())
        self._cache.clear()
        return revoked

    async def project_for(self, secret: str) -> str | None:
        """The key's project, or None. Answers are cached for KEY_CACHE_SECONDS, so a key
        revoked by another process stops working within that time (at once in this one)."""

        async def lookup() -> str | None:
            async with self.db.connect() as conn:
                return await keys.project_for(conn, secret)

        return await self._cache.get(keys.hash_key(secret), lookup)
