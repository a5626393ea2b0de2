"""Section 3: search latency (hybrid, vector, bm25) at 10k and 100k memories, and HNSW recall.

Memories are bulk-loaded into one user's UserKnowledge (see bench.bulkload for how and why
vectors are perturbed copies). The HNSW index is dropped during each load and rebuilt after
it with the migration's own DDL (m = 16, ef_construction = 64): same index, built faster.
After each load, VACUUM ANALYZE stands in for the autovacuum pass a live database gets.
Every query text is distinct, so each search pays for its query embedding (no cache hit).
Latency is closed-loop, one request at a time: in-process through Engine.search, and over
HTTP to a bench.serve_proc server on the same database.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

from sqlalchemy import text

from bench import bulkload
from bench.common import Table, ms, pct, question
from bench.loadgen import HttpPool
from bench.recall import recall_at_k, uses_hnsw
from bench.services import Server, mnemo_server
from mnemo.core.engine import Engine
from mnemo.domain.requests import SearchRequest
from mnemo.embedded.startup import start_engine
from mnemo.settings import Settings

SECTION = "3 search"
MODES = ("hybrid", "vector", "bm25")
SIZES = (10_000, 100_000)
HNSW_EF_SEARCH_MAX = 1000
HNSW_DDL = (
    "CREATE INDEX memories_embedding ON memories USING hnsw (embedding vector_cosine_ops) "
    "WITH (m = 16, ef_construction = 64)"
)


def body(query: str, mode: str) -> dict[str, object]:
    return {
        "query": query,
        "user_id": bulkload.USER,
        "retrieval_config": {"retrieval_type": mode, "limit": 10},
    }


async def timed_in_process(engine: Engine, queries: list[str], mode: str) -> list[float]:
    out = []
    for q in queries:
        started = time.perf_counter()
        found = await engine.search(bulkload.PROJECT, SearchRequest.model_validate(body(q, mode)))
        out.append(time.perf_counter() - started)
        assert found, f"{mode} search found nothing for {q!r}"
    return out


async def timed_http(server: Server, queries: list[str], mode: str) -> list[float]:
    pool = HttpPool("127.0.0.1", server.port, {"Authorization": f"Bearer {server.key}"}, 1)
    out = []
    for q in queries:
        started = time.perf_counter()
        status, payload = await pool.post("/v1/memories/search", body(q, mode))
        out.append(time.perf_counter() - started)
        assert status == 200, payload[:300]
    await pool.close()
    return out


async def rebuild_hnsw(engine: Engine, drop: bool) -> float:
    started = time.perf_counter()
    async with engine.database.db.begin() as conn:
        if drop:
            await conn.execute(text("DROP INDEX IF EXISTS memories_embedding"))
            return 0.0
        await conn.execute(text("SET LOCAL maintenance_work_mem = '1GB'"))
        await conn.execute(text(HNSW_DDL))
    return time.perf_counter() - started


async def measure(engine: Engine, server: Server, size: int, n: int, table: Table) -> None:
    rng = random.Random(size)
    serial = iter(range(size * 10, size * 11))
    label = f"{size // 1000}k"
    for mode in MODES:
        inproc = await timed_in_process(
            engine, [question(rng, next(serial)) for _ in range(n)], mode
        )
        http = await timed_http(server, [question(rng, next(serial)) for _ in range(n)], mode)
        note = "target p50 < 15 ms, p95 < 40 ms" if (mode, size) == ("hybrid", 100_000) else ""
        table.add(
            SECTION,
            f"{label} {mode}: in-process p50 / p95",
            f"{ms(pct(inproc, 50))} / {ms(pct(inproc, 95))}",
            note,
        )
        table.add(
            SECTION, f"{label} {mode}: HTTP p50 / p95", f"{ms(pct(http, 50))} / {ms(pct(http, 95))}"
        )
    # Every bench memory ends "(entry N)": a query word every memory holds, as "user" is in
    # extracted memories ("User likes ..."). Its postings are what the pruned top-k skips.
    common = await timed_in_process(
        engine, [f"{question(rng, next(serial))} entry" for _ in range(n)], "hybrid"
    )
    table.add(
        SECTION,
        f"{label} hybrid, + a word every memory holds: in-process p50 / p95",
        f"{ms(pct(common, 50))} / {ms(pct(common, 95))}",
        "bm25 prunes its postings from 5,000 memories (store/bm25_topk.py)",
    )
    alone = []
    for _ in range(n):
        started = time.perf_counter()
        await engine.deps.embedder.embed_query([question(rng, next(serial))])
        alone.append(time.perf_counter() - started)
    table.add(
        SECTION,
        f"{label} query embedding alone p50 / p95",
        f"{ms(pct(alone, 50))} / {ms(pct(alone, 95))}",
        "included in the figures above",
    )
    samples = [question(rng, next(serial)) for _ in range(n)]
    vectors = await engine.deps.embedder.embed(samples)
    planned = await uses_hnsw(engine, vectors[0])
    base = engine.settings.hnsw_ef_search
    # Half, default and double; pgvector refuses ef_search above 1000.
    for ef in sorted({max(1, base // 2), base, min(HNSW_EF_SEARCH_MAX, 2 * base)}):
        by_id, by_distance, median = await recall_at_k(
            engine, bulkload.PROJECT, bulkload.USER, bulkload.TOPIC, vectors, ef
        )
        default = " (default)" if ef == engine.settings.hnsw_ef_search else ""
        table.add(
            SECTION,
            f"{label} vector recall@10 vs exact, ef_search {ef}{default}",
            f"{by_id:.3f} by id, {by_distance:.3f} by distance; query p50 {ms(median)}",
            f"{n} queries (embedding excluded); distance: ann-benchmarks eps 1e-3; HNSW used: {planned}"
            + ("; target >= 0.95 at 100k" if size == 100_000 and default else ""),
        )


async def run_async(table: Table, work: Path, quick: bool) -> None:
    distinct = 500 if quick else 2000
    n = 30 if quick else 100
    settings = Settings(data_dir=work / "data" / "search")
    engine = await start_engine(settings, run_workers=False)
    try:
        texts = bulkload.corpus(distinct)
        vectors, rate = await bulkload.embed_rate(engine, texts)
        table.add(
            SECTION,
            "local model embedding rate (batch 64)",
            f"{rate:.0f} texts/s: 100k would take {100_000 / rate / 60:.1f} min",
            f"so {distinct} distinct texts embedded, reused with perturbation",
        )
        table.add(
            SECTION,
            "HNSW",
            f"m=16, ef_construction=64, ef_search={settings.hnsw_ef_search}",
            "cosine; hybrid fuses the top 40 of each list (z-score fusion, MNEMO_HYBRID_ALPHA on the vector list)",
        )
        with mnemo_server(work, "search", None, 16) as server:
            loaded = 0
            for size in SIZES:
                await rebuild_hnsw(engine, drop=True)
                rows_per_s = await bulkload.load_bulk(engine, texts, vectors, loaded, size)
                built = await rebuild_hnsw(engine, drop=False)
                loaded = size
                # What autovacuum does within a minute of a bulk load: statistics, and the
                # visibility map BM25's index-only scan of the postings relies on.
                autocommit = engine.database.db.execution_options(isolation_level="AUTOCOMMIT")
                async with autocommit.connect() as conn:
                    await conn.execute(text("VACUUM ANALYZE memories, memory_terms"))
                table.add(
                    SECTION,
                    f"{size // 1000}k load",
                    f"{rows_per_s:.0f} rows/s insert, HNSW build {built:.1f} s",
                )
                await measure(engine, server, size, n, table)
    finally:
        await engine.close()


def run(table: Table, work: Path, quick: bool) -> None:
    asyncio.run(run_async(table, work, quick))
