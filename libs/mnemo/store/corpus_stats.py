"""Corpus statistics for BM25 (document count N, average length) per filtered scope.

Counting a scope of 100k memories costs tens of milliseconds per query, and the figures
barely move between queries, so large scopes are cached for `ttl_seconds` (search engines
do the same: Lucene's statistics lag deletes and merges). Small scopes are counted every
time, so their scores are exact and a fresh user's first memories rank at once.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store.schema import memories


@dataclass(frozen=True)
class CorpusStats:
    documents: int
    average_length: float


class CorpusStatsCache:
    def __init__(
        self,
        ttl_seconds: float = 30.0,
        min_cached_documents: int = 5_000,
        max_entries: int = 2_048,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_seconds = ttl_seconds
        self.min_cached_documents = min_cached_documents
        self.max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, CorpusStats]] = OrderedDict()

    async def get(self, conn: AsyncConnection, where: ColumnElement[bool]) -> CorpusStats:
        key = _key_of(where)
        hit = self._entries.get(key)
        now = self._clock()
        if hit is not None and now - hit[0] < self.ttl_seconds:
            return hit[1]
        stats = await count(conn, where)
        if stats.documents >= self.min_cached_documents:
            self._entries[key] = (now, stats)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        else:
            self._entries.pop(key, None)
        return stats


async def count(conn: AsyncConnection, where: ColumnElement[bool]) -> CorpusStats:
    stmt = select(func.count(), func.coalesce(func.avg(memories.c.tsv_length), 0.0)).where(where)
    documents, average = (await conn.execute(stmt)).one()
    return CorpusStats(int(documents), float(average))


def _key_of(where: ColumnElement[bool]) -> str:
    compiled = where.compile(dialect=postgresql.dialect())
    params: dict[str, Any] = compiled.params
    return f"{compiled}|{sorted(params.items(), key=lambda kv: kv[0])!r}"
