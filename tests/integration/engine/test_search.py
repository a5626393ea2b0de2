"""Search modes on real Postgres: BM25 ranking, hybrid fusion and odd query texts."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import ColumnElement, text

from mnemo.core.engine import Engine
from mnemo.domain.search import MemoryQuery, TopicSelector
from mnemo.store.bm25 import bm25_search
from mnemo.store.corpus_stats import CorpusStats, CorpusStatsCache
from mnemo.store.tenancy import visible_memories
from tests.integration.engine.helpers import add_and_wait, facts, search

pytestmark = pytest.mark.integration

DOCS = (
    "The cat sat on the mat.",
    "Dogs chase cats in the park.",
    "The stock market fell today.",
    "See https://example.com/a:b for the e-mail foo|bar.",
)


@pytest.fixture
async def corpus(engine: Engine, project: str) -> str:
    await add_and_wait(
        engine, project, {"user_id": "u", "input": facts(*(("UserKnowledge", d) for d in DOCS))}
    )
    return project


async def test_bm25_ranks_by_term_weight_and_skips_non_matches(engine: Engine, corpus: str) -> None:
    hits = await search(
        engine, corpus, "cat on a mat", "bm25", user_id="u", topics=["UserKnowledge"]
    )
    assert [m.content for m in hits] == ["The cat sat on the mat.", "Dogs chase cats in the park."]
    assert 0 < hits[1].score < hits[0].score < 1  # type: ignore[operator]


@pytest.mark.parametrize("query", [":", "the of and", "it's O'Reilly's & !x | ", "example.com/a:b"])
async def test_odd_query_texts_never_fail(engine: Engine, corpus: str, query: str) -> None:
    for mode in ("bm25", "hybrid", "vector"):
        hits = await search(engine, corpus, query, mode, user_id="u", topics=["UserKnowledge"])
        assert all(0 <= (m.score or 0) <= 1 for m in hits)


async def test_hybrid_puts_the_match_of_both_lists_first(engine: Engine, corpus: str) -> None:
    hits = await search(engine, corpus, "stock market", user_id="u", topics=["UserKnowledge"])
    assert hits[0].content == "The stock market fell today."
    scores = [m.score or 0.0 for m in hits]
    assert scores == sorted(scores, reverse=True) and 0 < scores[-1] < scores[0] < 1


async def test_bm25_scores_match_okapi_computed_by_hand(engine: Engine, corpus: str) -> None:
    """One-term query: idf = ln(1 + (N - df + 0.5) / (df + 0.5)); N = the 4 memories of
    the scope below, df = 1; the tf/length part with k1 = 1.2, b = 0.75."""
    async with engine.database.db.connect() as conn:
        rows = await conn.execute(
            text("SELECT content, tsv_length FROM memories WHERE project = :p"), {"p": corpus}
        )
        lengths = {content: length for content, length in rows}
    (hit,) = await search(engine, corpus, "park", "bm25", user_id="u", topics=["UserKnowledge"])
    n, df, tf, dl = len(lengths), 1, 1, lengths[hit.content]
    avgdl = sum(lengths.values()) / n
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    raw = idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))
    assert hit.score == pytest.approx(raw / (raw + 1), abs=1e-5)


async def test_document_length_counts_every_lexeme_occurrence(engine: Engine, project: str) -> None:
    """BM25's dl is the number of term occurrences (stop words excluded), not of distinct
    lexemes: a long text that repeats its words is still long."""
    text_ = "The cat chased the cat, and the cat sat on the mat."
    await add_and_wait(engine, project, {"user_id": "u", "input": facts(("UserKnowledge", text_))})
    async with engine.db.connect() as conn:
        length, distinct = (
            await conn.execute(
                text("SELECT tsv_length, length(tsv) FROM memories WHERE project = :p"),
                {"p": project},
            )
        ).one()
    assert (length, distinct) == (6, 4)  # cat x3, chase, sat, mat


async def test_large_scopes_cache_their_statistics_and_small_ones_never_do(
    engine: Engine, project: str
) -> None:
    clock = [0.0]
    cache = CorpusStatsCache(ttl_seconds=30, min_cached_documents=3, clock=lambda: clock[0])
    for i in range(3):
        await add_and_wait(
            engine, project, {"user_id": "big", "input": facts(("UserKnowledge", f"fact {i}"))}
        )
    await add_and_wait(
        engine, project, {"user_id": "small", "input": facts(("UserKnowledge", "one"))}
    )
    big, small = [await _scope(engine, project, user) for user in ("big", "small")]

    async with engine.database.db.connect() as conn:
        assert (await cache.get(conn, big)).documents == 3
        assert (await cache.get(conn, small)).documents == 1
    for user in ("big", "small"):
        await add_and_wait(
            engine, project, {"user_id": user, "input": facts(("UserKnowledge", "more"))}
        )

    async with engine.database.db.connect() as conn:
        assert (await cache.get(conn, big)).documents == 3  # cached: within the TTL
        assert (await cache.get(conn, small)).documents == 2  # below the threshold: exact
        clock[0] = 31.0
        assert (await cache.get(conn, big)).documents == 4  # refreshed after the TTL


async def test_stale_statistics_never_break_scoring(engine: Engine, corpus: str) -> None:
    """A cached N below a term's document frequency (memories added since) still scores."""
    group = await engine.group(corpus, "default")
    where = visible_memories(
        MemoryQuery(
            project=corpus,
            group="default",
            user_id="u",
            topics=(TopicSelector(name="UserKnowledge"),),
        ),
        group,
    )
    async with engine.database.db.connect() as conn:
        hits = await bm25_search(conn, where, "cat", 10, CorpusStats(documents=0, average_length=0))
    assert hits and all(score >= 0 for _, score in hits)


async def _scope(engine: Engine, project: str, user: str) -> ColumnElement[bool]:
    query = MemoryQuery(
        project=project,
        group="default",
        user_id=user,
        topics=(TopicSelector(name="UserKnowledge"),),
    )
    return visible_memories(query, await engine.group(project, "default"))


async def test_every_pooled_session_searches_with_the_configured_ef_search(
    engine: Engine, corpus: str
) -> None:
    """Set per session, not per search: reconciliation's lookups get the same recall."""
    await search(engine, corpus, "cat", "vector", user_id="u", topics=["UserKnowledge"])
    async with engine.database.db.connect() as conn:
        await conn.execute(text("SELECT '[1,2,3]'::vector"))  # pgvector loaded in this session
        shown = (await conn.execute(text("SHOW hnsw.ef_search"))).scalar_one()
    assert int(shown) == engine.settings.hnsw_ef_search == 400
