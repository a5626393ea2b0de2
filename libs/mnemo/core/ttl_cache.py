"""A small TTL cache whose concurrent misses of one key share one load.

Lookups on the request path (API keys, group configurations) are cached for seconds. When
an entry expires under load, every request in flight would otherwise miss at once and each
open a database connection, overflowing the pool into connect/close churn.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TTLCache(Generic[K, V]):
    def __init__(
        self,
        ttl_seconds: float,
        max_entries: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_seconds = ttl_seconds
        self.max_entries = max_entries
        self._clock = clock
        self._entries: dict[K, tuple[float, V]] = {}
        self._loading: dict[K, asyncio.Future[V]] = {}

    async def get(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        """The cached value, or `load()`'s (cached on success; failures are not cached)."""
        while True:
            entry = self._entries.get(key)
            if entry is not None and self._clock() < entry[0]:
                return entry[1]
            loading = self._loading.get(key)
            if loading is None:
                return await self._load(key, load)
            try:
                return await asyncio.shield(loading)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # this caller is being cancelled
                # else the caller that was loading went away: try again

    async def _load(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._loading[key] = future
        try:
            value = await load()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # marks it retrieved: no "never retrieved" log when unshared
            raise
        finally:
            del self._loading[key]
        self.put(key, value)
        future.set_result(value)
        return value

    def put(self, key: K, value: V) -> None:
        if len(self._entries) >= self.max_entries and key not in self._entries:
            self._entries.clear()  # crude but bounded; entries are cheap to reload
        self._entries[key] = (self._clock() + self.ttl_seconds, value)

    def forget(self, key: K) -> None:
        """Drop one entry (the next `get` loads it again)."""
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()
