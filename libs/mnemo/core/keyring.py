"""API keys: create, list, revoke, and the cached lookup every request makes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.core.ttl_cache import TTLCache
from mnemo.domain.grants import Grant
from mnemo.store import keys

KEY_CACHE_SECONDS = 5.0
# Lookups of keys not known to be valid (new keys, and every made-up key a client sends)
# that run at once: a flood of random keys queues here instead of taking the database
# pool from authenticated requests. Keys that were valid at their last lookup skip it.
UNKNOWN_KEY_LOOKUPS = 2
MAX_KNOWN_KEYS = 10_000


@dataclass
class KeyRing:
    db: AsyncEngine
    clock: Clock
    _cache: TTLCache[str, Grant | None] = field(default_factory=lambda: TTLCache(KEY_CACHE_SECONDS))
    _valid: set[str] = field(default_factory=set)  # digests valid at their last lookup
    _unknown: asyncio.Semaphore = field(
        default_factory=lambda: asyncio.Semaphore(UNKNOWN_KEY_LOOKUPS)
    )

    async def create(
        self, project: str, name: str, *, writable: bool = True, user_id: str | None = None
    ) -> tuple[keys.ApiKey, str]:
        """The stored key and its secret (shown once, never stored)."""
        async with self.db.begin() as conn:
            return await keys.create(
                conn, project, name, self.clock.now(), writable=writable, user_id=user_id
            )

    async def list(self, project: str | None = None) -> list[keys.ApiKey]:
        async with self.db.connect() as conn:
            return await keys.list_(conn, project)

    async def revoke(self, key_id: str) -> bool:
        async with self.db.begin() as conn:
            revoked = await keys.revoke(conn, key_id, self.clock.now())
        self._cache.clear()
        return revoked

    async def project_for(self, secret: str) -> str | None:
        grant = await self.grant_for(secret)
        return None if grant is None else grant.project

    async def grant_for(self, secret: str) -> Grant | None:
        """What the key may do, or None. Answers are cached for KEY_CACHE_SECONDS, so a key
        revoked by another process stops working within that time (at once in this one)."""
        digest = keys.hash_key(secret)

        async def lookup() -> Grant | None:
            if digest in self._valid:
                return await self._read(secret, digest)
            async with self._unknown:
                return await self._read(secret, digest)

        return await self._cache.get(digest, lookup)

    async def _read(self, secret: str, digest: str) -> Grant | None:
        async with self.db.connect() as conn:
            grant = await keys.grant_for(conn, secret)
        if grant is None:
            self._valid.discard(digest)
        else:
            if len(self._valid) >= MAX_KNOWN_KEYS:
                self._valid.clear()  # bounded; a cleared key only waits its turn once
            self._valid.add(digest)
        return grant
