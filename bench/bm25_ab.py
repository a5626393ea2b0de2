"""A/B of the pruned BM25 top-k (store/bm25_topk.py) against the exhaustive ranking, on the
search section's data dir (`python -m bench.run --only 3 --keep` leaves it loaded).

The two are interleaved query by query, so a machine whose load moves weighs on both alike.
Timed: the bm25 half alone (store level, depth 40 as hybrid asks, with one statistics cache
as the engine keeps) and Engine.search in hybrid and bm25 mode. Queries: the search
section's questions, the same again (their common terms' frequencies now cached), and the
same with a word every memory holds ("entry": the bulk loader ends every memory with
"(entry N)"), standing for the "User ..." that extraction opens most memories with.

    python -m bench.bm25_ab [data_dir] [queries]
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from pathlib import Path
from typing import Any

from bench import bulkload
from bench.common import pct, question
from bench.run import RESULTS
from mnemo.core.engine import Engine
from mnemo.domain.requests import SearchRequest
from mnemo.domain.search import MemoryQuery, TopicSelector
from mnemo.embedded.startup import start_engine
from mnemo.settings import Settings
from mnemo.store import search as store_search
from mnemo.store.bm25 import bm25_search
from mnemo.store.bm25_topk import Ranked, pruned_search
from mnemo.store.corpus_stats import CorpusStatsCache
from mnemo.store.tenancy import visible_memories

DEPTH = 40


async def exhaustive(conn: Any, where: Any, text_: str, limit: int, corpus: Any) -> Ranked:
    return Ranked(await bm25_search(conn, where, text_, limit, corpus), "exhaustive", {})


async def ab(engine: Engine, queries: list[str], stats: CorpusStatsCache) -> dict[str, list[float]]:
    group = await engine.group(bulkload.PROJECT, "default")
    query = MemoryQuery(
        project=bulkload.PROJECT,
        group="default",
        user_id=bulkload.USER,
        topics=(TopicSelector(name=bulkload.TOPIC),),
    )
    where = visible_memories(query, group)
    out: dict[str, list[float]] = {}
    paths: dict[str, int] = {}
    for q in queries:
        for name, impl in (("exhaustive", exhaustive), ("pruned", pruned_search)):
            async with engine.database.db.connect() as conn:
                started = time.perf_counter()
                corpus = await stats.get(conn, where)
                ranked = await impl(conn, where, q, DEPTH, corpus)
                stats.learn(where, corpus, ranked.counted)
                out.setdefault(f"bm25 half, {name}", []).append(time.perf_counter() - started)
                if name == "pruned":
                    paths[ranked.path] = paths.get(ranked.path, 0) + 1
            store_search.pruned_search = impl  # type: ignore[assignment]
            for mode in ("hybrid", "bm25"):
                body = {
                    "query": q,
                    "user_id": bulkload.USER,
                    "retrieval_config": {"retrieval_type": mode, "limit": 10},
                }
                request = SearchRequest.model_validate(body)
                started = time.perf_counter()
                await engine.search(bulkload.PROJECT, request)
                seconds = time.perf_counter() - started
                out.setdefault(f"{mode} search, {name}", []).append(seconds)
    store_search.pruned_search = pruned_search
    print("paths of the pruned half:", paths)
    return out


async def main(data_dir: Path, n: int) -> None:
    engine = await start_engine(Settings(data_dir=data_dir), run_workers=False)
    rng = random.Random(1)
    try:
        plain = [question(rng, 10_000_000 + i) for i in range(n)]
        # One statistics cache, as the engine keeps: the second pass finds the common
        # terms' frequencies cached (within the ttl).
        stats = CorpusStatsCache()
        for label, queries in (
            ("bench questions", plain),
            ("the same again", plain),
            ("+ 'entry'", [f"{q} entry" for q in plain]),
        ):
            for name, seconds in (await ab(engine, queries, stats)).items():
                print(
                    f"{label:16} {name:26} p50 {pct(seconds, 50) * 1000:6.1f} ms"
                    f"  p95 {pct(seconds, 95) * 1000:6.1f} ms"
                )
    finally:
        await engine.close()


if __name__ == "__main__":
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS / "work" / "data" / "search"
    asyncio.run(main(data, int(sys.argv[2]) if len(sys.argv) > 2 else 60))
