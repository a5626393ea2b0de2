"""Corpus statistics for BM25 per filtered scope: the document count N, the average length,
and the document frequencies of the scope's common terms.

Counting a scope of 100k memories costs tens of milliseconds per query, and the figures
barely move between queries, so large scopes are cached for `ttl_seconds` (search engines
do the same: Lucene's statistics lag deletes and merges). Small scopes are counted every
time, so their scores are exact and a fresh user's first memories rank at once.

In a cached scope, a term's document frequency is cached with N once it reaches
`min_cached_postings`: counting the postings of a word that nearly every memory holds
("user") costs as much as ranking them, and its idf, a logarithm, hardly moves in
`ttl_seconds`. Rarer terms are counted by every query (cheap: few postings), so a new
word is searchable at once. Only the statistics lag: every posting is read live.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store.schema import memories


@dataclass(frozen=True)
class CorpusStats:
    documents: int
    average_length: float
    # Known document frequencies of common terms (cached scopes only): store/bm25_topk.py
    # counts every other query term itself.
    frequencies: Mapping[str, int] = field(default_factory=dict)


@dataclass
class _Entry:
    at: float
    stats: CorpusStats
    frequencies: dict[str, int]


class CorpusStatsCache:
    def __init__(
        self,
        ttl_seconds: float = 30.0,
        min_cached_documents: int = 5_000,
        max_entries: int = 2_048,
        clock: Callable[[], float] = time.monotonic,
        min_cached_postings: int = 1_000,
        max_cached_terms: int = 512,
    ) -> None:
        self.ttl_seconds = ttl_seconds
        self.min_cached_documents = min_cached_documents
        self.max_entries = max_entries
        self.min_cached_postings = min_cached_postings
        self.max_cached_terms = max_cached_terms
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    async def get(self, conn: AsyncConnection, where: ColumnElement[bool]) -> CorpusStats:
        key = _key_of(where)
        hit = self._entries.get(key)
        now = self._clock()
        if hit is not None and now - hit.at < self.ttl_seconds:
            return hit.stats
        stats = await count(conn, where)
        if stats.documents >= self.min_cached_documents:
            frequencies: dict[str, int] = {}
            stats = CorpusStats(
                stats.documents, stats.average_length, MappingProxyType(frequencies)
            )
            self._entries[key] = _Entry(now, stats, frequencies)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        else:
            self._entries.pop(key, None)
        return stats

    def learn(
        self, where: ColumnElement[bool], corpus: CorpusStats, counted: Mapping[str, int]
    ) -> None:
        """Keep the common terms among `counted` (document frequencies a query counted in
        the scope `corpus` describes) with that scope's entry, if it is still the cached
        one: they expire with N and the average length."""
        if corpus.documents < self.min_cached_documents:
            return
        common = {
            term: df
            for term, df in counted.items()
            if df >= self.min_cached_postings and term not in corpus.frequencies
        }
        if not common:
            return
        entry = self._entries.get(_key_of(where))
        if entry is None or entry.stats is not corpus:
            return
        for term, df in common.items():
            if len(entry.frequencies) >= self.max_cached_terms:
                break
            entry.frequencies[term] = df


async def count(conn: AsyncConnection, where: ColumnElement[bool]) -> CorpusStats:
    stmt = select(func.count(), func.coalesce(func.avg(memories.c.tsv_length), 0.0)).where(where)
    documents, average = (await conn.execute(stmt)).one()
    return CorpusStats(int(documents), float(average))


def _key_of(where: ColumnElement[bool]) -> str:
    compiled = where.compile(dialect=postgresql.dialect())
    params: dict[str, Any] = compiled.params
    return f"{compiled}|{sorted(params.items(), key=lambda kv: kv[0])!r}"
