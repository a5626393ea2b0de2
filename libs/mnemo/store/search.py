"""Retrieval over committed memories: vector, keyword (bm25 mode), hybrid and fetch.

Scores: higher is better, in [0, 1].
- vector: cosine similarity mapped from [-1, 1] to [0, 1];
- bm25: Okapi BM25 (k1 1.2, b 0.75) over the English lexemes of the filtered scope, s / (1 + s);
- hybrid: z-score fusion (`fuse`): each list standardised by its own score distribution,
  alpha * z(vector) + (1 - alpha) * z(bm25) (alpha 0.65 by default), through the logistic;
- fetch: 1.0 for every memory of the selected topics in the scope, bounded topics' first,
  then newest by `updated_at`; the query text is ignored.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, case, literal_column, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Memory
from mnemo.domain.search import MemoryQuery
from mnemo.store.as_of import reading_at
from mnemo.store.bm25 import bm25_search, squash
from mnemo.store.bm25_topk import pruned_search
from mnemo.store.corpus_stats import CorpusStatsCache
from mnemo.store.rows import MEMORY_COLUMNS, memory_from_row
from mnemo.store.schema import memories
from mnemo.store.tenancy import visible_memories

# A result row (MEMORY_COLUMNS plus a score column) and its score.
Hit = Any

# Candidates each list contributes to hybrid fusion (min-max is taken over these).
FUSION_DEPTH = 40


async def vector_search(
    conn: AsyncConnection, where: ColumnElement[bool], embedding: Sequence[float], limit: int
) -> list[tuple[Hit, float]]:
    distance = memories.c.embedding.cosine_distance(list(embedding))
    stmt = select(*MEMORY_COLUMNS, distance.label("distance")).where(where)
    rows = (await conn.execute(stmt.order_by(distance).limit(limit))).all()
    if len(rows) < limit:
        # HNSW filters after the graph walk, so a selective filter can starve it; an exact
        # scan over the (small) filtered set restores full recall.
        exact = stmt.order_by(distance + literal_column("0")).limit(limit)
        rows = (await conn.execute(exact)).all()
    return [(row, 1.0 - float(row.distance) / 2.0) for row in rows]


async def keyword_search(
    conn: AsyncConnection,
    where: ColumnElement[bool],
    text_: str,
    limit: int,
    corpus_stats: CorpusStatsCache,
    indexed: bool = True,
) -> list[tuple[Hit, float]]:
    """Raw BM25 scores (>= 0); bm25 mode squashes them into [0, 1) for the caller.
    `indexed`: read the postings table, with the pruned top-k (store/bm25_topk.py) in a
    scope large enough to cache its statistics; False for as-of reads, which rank the
    documents themselves (store/bm25.py)."""
    corpus = await corpus_stats.get(conn, where)
    if not indexed or corpus.documents < corpus_stats.min_cached_documents:
        # A small scope ranks all its postings in one statement faster than pruning's two.
        return await bm25_search(conn, where, text_, limit, corpus, indexed)
    ranked = await pruned_search(conn, where, text_, limit, corpus)
    corpus_stats.learn(where, corpus, ranked.counted)
    return ranked.hits


def standardise(ranked: list[tuple[Hit, float]]) -> dict[str, float]:
    """z-scores of one list: (score - mean) / standard deviation over the list itself, so
    each query's own spread of scores sets the scale (one list alone, or equal scores: 0)."""
    if not ranked:
        return {}
    scores = [s for _, s in ranked]
    mean = math.fsum(scores) / len(scores)
    spread = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / len(scores))
    return {row.id: (s - mean) / spread if spread > 0 else 0.0 for row, s in ranked}


def fuse(
    vector: list[tuple[Hit, float]], keyword: list[tuple[Hit, float]], alpha: float, limit: int
) -> list[tuple[Hit, float]]:
    """z-score fusion: alpha * z(vector) + (1 - alpha) * z(keyword), best first, with each
    list standardised over its own FUSION_DEPTH candidates (`standardise`). A memory missing
    from a list gets that list's lowest z (it ranked below all of them there). Scores are the
    fused z through the logistic, in (0, 1).

    Why not min-max (relative score fusion, the former default): min-max pins each list's
    best and worst candidates to 1 and 0 whatever the gap, so a list whose scores are all
    close (bm25 on a question that shares only common words with the memories) weighs as
    much as one with a clear winner, and a fixed weight tuned on one kind of data lost on
    another (bench/retrieval.py; README, Retrieval quality). The keyword list is fused on raw
    BM25, not on its squashed [0, 1] form, which flattens exactly the top scores.
    """
    by_vector = standardise(vector)
    lists = [(by_vector, alpha), (standardise(keyword), 1.0 - alpha)]
    rows = {row.id: row for ranked in (vector, keyword) for row, _ in ranked}
    fused = {
        memory_id: math.fsum(weight * z.get(memory_id, min(z.values())) for z, weight in lists if z)
        for memory_id in rows
    }
    # An exact tie (two candidates the lists rank oppositely are +1/-1 in each at alpha 0.5)
    # goes to the vector list's favourite, not to whichever random id sorts first.
    ordered = sorted(
        fused.items(), key=lambda kv: (-kv[1], -by_vector.get(kv[0], -math.inf), kv[0])
    )[:limit]
    return [(rows[memory_id], 1.0 / (1.0 + math.exp(-score))) for memory_id, score in ordered]


def similar_enough(
    hits: list[tuple[Hit, float]], vector: list[tuple[Hit, float]], floor: float
) -> list[tuple[Hit, float]]:
    """The fused `hits` whose vector score ((cos + 1) / 2) reaches `floor`, in their order:
    a query-independent cut under hybrid's per-query scores. A hit the vector list did not
    return ranked below all of its candidates there, so it has no known score: dropped."""
    similarity = {row.id: score for row, score in vector}
    return [(row, s) for row, s in hits if similarity.get(row.id, -1.0) >= floor]


async def search(
    db: AsyncEngine,
    query: MemoryQuery,
    group: GroupConfig,
    embed_query: Callable[[], Awaitable[Sequence[float]]],
    corpus_stats: CorpusStatsCache,
    hybrid_alpha: float,
    pool: int = 0,
) -> list[Memory]:
    """Run `query`. `embed_query` is awaited only by the modes that need a vector, and in
    hybrid mode while the keyword half already runs on its own connection. With
    `query.as_of` every mode reads the memories as they stood then (`store.as_of`).
    `pool`: return up to that many ranked hits rather than `query.limit` (when larger), for
    ranking that moves candidates before the cut (`core.recall_signals`)."""
    limit = max(query.limit, pool)
    where = visible_memories(query, group)
    if query.as_of is not None:
        corpus_stats = CorpusStatsCache(ttl_seconds=0.0)  # a past scope: counted, not cached
    if query.retrieval_type == "fetch":
        async with db.connect() as conn:
            return await fetch(reading_at(conn, query.as_of), where, query, group)

    async def vector_half(limit: int) -> list[tuple[Hit, float]]:
        embedding = await embed_query()
        async with db.connect() as conn:  # hnsw.ef_search is set per session (database.py)
            return await vector_search(reading_at(conn, query.as_of), where, embedding, limit)

    async def keyword_half(limit: int) -> list[tuple[Hit, float]]:
        async with db.connect() as conn:
            reader = reading_at(conn, query.as_of)
            indexed = query.as_of is None
            return await keyword_search(reader, where, query.text, limit, corpus_stats, indexed)

    if query.retrieval_type == "bm25":
        hits = [(row, squash(score)) for row, score in await keyword_half(limit)]
    elif query.retrieval_type == "vector":
        hits = await vector_half(limit)
        if query.min_similarity is not None:
            hits = [(row, s) for row, s in hits if s >= query.min_similarity]
    else:
        depth = max(limit, FUSION_DEPTH)
        vector, keyword = await asyncio.gather(vector_half(depth), keyword_half(depth))
        hits = fuse(vector, keyword, hybrid_alpha, limit)
        if query.min_similarity is not None:
            hits = similar_enough(hits, vector, query.min_similarity)
    return [memory_from_row(row, score=round(score, 6)) for row, score in hits]


async def fetch(
    conn: AsyncConnection, where: ColumnElement[bool], query: MemoryQuery, group: GroupConfig
) -> list[Memory]:
    """The selected topics' memories in the caller's scope without a query: bounded topics'
    memories first (a profile, a summary), then the newest by `updated_at`, up to `limit`."""
    bounded = [s.name for s in query.topics if group.topic(s.name).is_bounded]
    stmt = (
        select(*MEMORY_COLUMNS)
        .where(where)
        .order_by(
            case((memories.c.topic.in_(bounded), 0), else_=1),
            memories.c.updated_at.desc(),
            memories.c.id,
        )
        .limit(query.limit)
    )
    return [memory_from_row(row, score=1.0) for row in (await conn.execute(stmt)).all()]


# How many later memories of the scope a search looks at for successors of its hits.
SUCCESSOR_DEPTH = 100


async def later_memories(
    db: AsyncEngine, query: MemoryQuery, group: GroupConfig, found: list[Memory]
) -> list[Memory]:
    """The scope's memories whose evidence ends after the earliest hit's, newest first (up to
    SUCCESSOR_DEPTH): where a hit's successor is found when the hit alone matched the query
    (`core.supersession.with_successors`). As of `query.as_of` when it is set."""
    times = [m.event_time_end or m.event_time for m in found]
    known = [t for t in times if t is not None]
    # Without a hit the query still runs (and finds nothing): one statement shape per scope
    # shape, compiled once, whatever the results (tests/integration/engine/test_statement_cache.py).
    after = min(known) if known else datetime.max.replace(tzinfo=UTC)
    stmt = (
        select(*MEMORY_COLUMNS)
        .where(visible_memories(query, group), memories.c.event_time_end > after)
        .order_by(memories.c.event_time_end.desc(), memories.c.id)
        .limit(SUCCESSOR_DEPTH)
    )
    async with db.connect() as conn:
        rows = (await reading_at(conn, query.as_of).execute(stmt)).all()
    return [memory_from_row(row) for row in rows]
