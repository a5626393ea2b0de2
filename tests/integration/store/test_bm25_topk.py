"""The pruned BM25 top-k (store/bm25_topk.py) returns exactly the exhaustive ranking: same
ids, same order, same scores, on a corpus where some terms are in nearly every memory."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import ColumnElement, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.core.engine import Engine
from mnemo.domain.search import MemoryQuery, TopicSelector
from mnemo.store.bm25 import bm25_search, on_terms
from mnemo.store.bm25_topk import pruned_search
from mnemo.store.corpus_stats import CorpusStats, CorpusStatsCache, count
from mnemo.store.schema import memories, memory_terms
from mnemo.store.tenancy import visible_memories
from tests.integration.store.test_memory_terms import GROUP  # user-scoped Notes, Team by property

pytestmark = pytest.mark.integration

# Skewed: "user" opens nearly every memory, "like" half of them; then a long tail.
COMMON = {"User": 0.95, "likes": 0.5, "often": 0.3}
TAIL = (
    "apple river stone cloud maple honey violin garden copper lantern quiet swift "
    "harbor meadow falcon ember glacier saffron tundra quartz"
).split()


def _text(rnd: random.Random) -> str:
    words = [w for w, share in COMMON.items() if rnd.random() < share]
    # Zipf-like tail: early tail words are far more frequent than late ones; repeats give tf > 1.
    words += [
        TAIL[min(int(rnd.expovariate(0.35)), len(TAIL) - 1)] for _ in range(rnd.randint(1, 6))
    ]
    return " ".join(words)


async def _load(engine: Engine, project: str, n: int) -> None:
    rnd = random.Random(11)
    texts = [_text(rnd) for _ in range(n // 2)]
    # Every text twice (exact score ties); half the twins share updated_at too (id decides).
    await _insert(engine, project, [texts[i % len(texts)] for i in range(n)])


async def _insert(engine: Engine, project: str, contents: list[str]) -> None:
    (vector,) = await engine.deps.embedder.embed(["x"])
    start = datetime(2026, 12, 1, tzinfo=UTC)
    rows = []
    half = max(len(contents) // 2, 1)
    for i, text_ in enumerate(contents):
        at = start + timedelta(minutes=(i % half) if i % 4 < 2 else i)
        topic = "Notes" if i % 3 else "Team"
        rows.append(
            {
                "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{project}/{i}")),
                "project": project,
                "group": "g",
                "topic": topic,
                "user_id": ("ana", "bo")[i % 2] if topic == "Notes" else None,
                "properties": {"team": ("red", "blue")[i % 5 % 2]},
                "content": text_,
                "embedding": vector,
                "status": "active",
                "version": 1,
                "run_ids": ["r"],
                "created_at": at,
                "updated_at": at,
                "event_time": at,
                "event_time_end": at,
                "operation": "created",
            }
        )
    async with engine.database.db.begin() as conn:
        await conn.execute(insert(memories), rows)


async def test_the_pruned_top_k_equals_the_exhaustive_ranking(engine: Engine, project: str) -> None:
    await engine.put_group(project, "g", GROUP)
    await _load(engine, project, 1200)
    group = await engine.group(project, "g")
    both = (TopicSelector(name="Notes"), TopicSelector(name="Team"))
    shapes = [
        MemoryQuery(project=project, group="g", user_id="ana", topics=both),
        MemoryQuery(project=project, group="g", user_id="bo", topics=(TopicSelector(name="Notes"),)),
        MemoryQuery(project=project, group="g", user_id="ana", properties={"team": "red"},
                    topics=both),
        MemoryQuery(project=project, group="g", properties={"team": "blue"},
                    topics=(TopicSelector(name="Team"),)),
    ]  # fmt: skip
    rnd = random.Random(3)
    paths: dict[str, int] = {}
    async with engine.database.db.connect() as conn:
        for query in shapes:
            where = visible_memories(query, group)
            corpus = await _known(conn, where, at_least=20)
            for _ in range(12):
                words = rnd.sample(TAIL, rnd.randint(1, 3)) + rnd.sample(list(COMMON), 2)
                text_ = " ".join(rnd.sample(words, len(words)))
                for k in (1, 3, 10, 40):
                    pruned, path, _ = await pruned_search(conn, where, text_, k, corpus)
                    exhaustive = await bm25_search(conn, where, text_, k, corpus, indexed=True)
                    assert [(r.id, round(s, 9)) for r, s in pruned] == [
                        (r.id, round(s, 9)) for r, s in exhaustive
                    ], (query, text_, k, path)
                    assert len(pruned) == min(k, len(exhaustive))
                    paths[path] = paths.get(path, 0) + 1
    # The comparison is only worth something if pruning happened, and often.
    assert paths.get("pruned", 0) >= 40, paths


async def test_when_the_bound_does_not_hold_the_exhaustive_ranking_decides(
    engine: Engine, project: str
) -> None:
    """Three memories hold the rare word, each in a long text (a low partial score), and
    one holds only the common word, four times: the common word's bound exceeds theta, so
    the pruned rows (which never see that memory) must not be returned."""
    await engine.put_group(project, "g", GROUP)
    filler = "quiet swift harbor meadow falcon ember glacier saffron tundra quartz"
    contents = [f"zeppelin {' '.join([filler] * 6)}"] * 9 + ["likes likes likes likes"] * 3
    contents += ["likes apple"] * 90 + ["river stone"] * 30
    await _insert(engine, project, contents)
    group = await engine.group(project, "g")
    where = visible_memories(_ana(project), group)
    async with engine.database.db.connect() as conn:
        corpus = await _known(conn, where, at_least=1)
        assert {"zeppelin", "like"} <= corpus.frequencies.keys()
        found = await pruned_search(conn, where, "zeppelin likes", 3, corpus)
        exhaustive = await bm25_search(conn, where, "zeppelin likes", 3, corpus)
    assert found.path == "fallback"
    assert "likes likes likes likes" in {row.content for row, _ in found.hits}
    assert [r.id for r, _ in found.hits] == [r.id for r, _ in exhaustive]


async def _known(conn: AsyncConnection, where: ColumnElement[bool], at_least: int) -> CorpusStats:
    """The scope's statistics, knowing (as a warm cache would) the exact document frequency
    of every term in at least `at_least` of its memories."""
    stats = await count(conn, where)
    df = func.count().label("df")
    found = await conn.execute(
        select(memory_terms.c.lexeme, df)
        .where(on_terms(where))
        .group_by(memory_terms.c.lexeme)
        .having(func.count() >= at_least)
    )
    known = {row.lexeme: int(row.df) for row in found}
    return CorpusStats(stats.documents, stats.average_length, known)


async def test_a_query_of_only_unknown_words_finds_nothing(engine: Engine, project: str) -> None:
    await engine.put_group(project, "g", GROUP)
    await _load(engine, project, 40)
    group = await engine.group(project, "g")
    query = MemoryQuery(project=project, group="g", user_id="ana",
                        topics=(TopicSelector(name="Notes"),))  # fmt: skip
    where = visible_memories(query, group)
    async with engine.database.db.connect() as conn:
        corpus = await count(conn, where)
        ranked = await pruned_search(conn, where, "zebra, the", 10, corpus)
    assert (ranked.hits, ranked.path) == ([], "exhaustive")


async def test_cached_frequencies_are_not_counted_again_and_rank_the_same(
    engine: Engine, project: str
) -> None:
    """In a cached scope the common terms' document frequencies are learned from the first
    search and not counted again within the ttl; the ranking stays the exhaustive one."""
    await engine.put_group(project, "g", GROUP)
    await _load(engine, project, 600)
    group = await engine.group(project, "g")
    where = visible_memories(_ana(project), group)
    cache = CorpusStatsCache(min_cached_documents=100, min_cached_postings=100)
    text_ = "User garden"
    async with engine.database.db.connect() as conn:
        first = await pruned_search(conn, where, text_, 10, await cache.get(conn, where))
        cache.learn(where, await cache.get(conn, where), first.counted)
        corpus = await cache.get(conn, where)
        second = await pruned_search(conn, where, text_, 10, corpus)
        exhaustive = await bm25_search(conn, where, text_, 10, corpus, indexed=True)
    common = {t for t, df in first.counted.items() if df >= 100}
    assert "user" in common and set(corpus.frequencies) == common
    assert set(second.counted) == set(first.counted) - common
    assert second.path == "pruned", first.counted
    assert [(r.id, round(s, 9)) for r, s in second.hits] == [
        (r.id, round(s, 9)) for r, s in exhaustive
    ]


async def test_in_a_cached_scope_a_new_word_is_found_at_once(engine: Engine, project: str) -> None:
    """Only common terms' frequencies lag; a word the scope did not hold when its statistics
    were cached is counted by the query that asks for it."""
    await engine.put_group(project, "g", GROUP)
    await _load(engine, project, 600)
    group = await engine.group(project, "g")
    where = visible_memories(_ana(project), group)
    clock = [0.0]
    cache = CorpusStatsCache(
        min_cached_documents=100, min_cached_postings=100, clock=lambda: clock[0]
    )
    async with engine.database.db.connect() as conn:
        corpus = await cache.get(conn, where)
        cache.learn(where, corpus, (await pruned_search(conn, where, "user", 10, corpus)).counted)
        assert "user" in (await cache.get(conn, where)).frequencies
    async with engine.database.db.begin() as conn:
        ana = (memories.c.project == project) & (memories.c.user_id == "ana")
        row = await conn.execute(select(memories).where(ana).limit(1))
        fresh = dict(row.one()._mapping) | {"id": "fresh", "content": "User likes zeppelin"}
        for generated in ("tsv", "tsv_length"):
            fresh.pop(generated)
        await conn.execute(insert(memories).values(fresh))
    async with engine.database.db.connect() as conn:
        corpus = await cache.get(conn, where)
        assert "user" in corpus.frequencies  # still cached: within the ttl
        found = await pruned_search(conn, where, "user zeppelin", 3, corpus)
        assert [r.id for r, _ in found.hits][:1] == ["fresh"]
        assert found.counted["zeppelin"] == 1
        clock[0] = 31.0
        assert not (await cache.get(conn, where)).frequencies  # recounted after the ttl


def _ana(project: str) -> MemoryQuery:
    both = (TopicSelector(name="Notes"), TopicSelector(name="Team"))
    return MemoryQuery(project=project, group="g", user_id="ana", topics=both)
