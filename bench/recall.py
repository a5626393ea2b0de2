"""Recall@10 of HNSW vector search against an exact scan, on the same filter and vectors."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

from sqlalchemy import text

from mnemo.core.engine import Engine
from mnemo.domain.search import MemoryQuery, TopicSelector
from mnemo.store.search import vector_search
from mnemo.store.tenancy import visible_memories

K = 10
EPSILON = 1e-3  # ann-benchmarks' default


async def recall_at_k(
    engine: Engine,
    project: str,
    user: str,
    topic: str,
    embeddings: Sequence[Sequence[float]],
    ef_search: int | None = None,
) -> tuple[float, float, float]:
    """(id recall, distance recall, median seconds of the HNSW query) of HNSW top-k against
    an exact scan, averaged.

    id recall = |HNSW ids ∩ exact ids| / k. It undercounts when many memories are equally
    close (near-duplicates tie, and which of them is "exact" is noise), so the table also
    gives ann-benchmarks' recall: an HNSW hit counts when its distance is within (1 + 1e-3)
    of the exact k-th distance."""
    group = await engine.group(project, "default")
    query = MemoryQuery(
        project=project,
        group="default",
        topics=(TopicSelector(name=topic),),
        user_id=user,
        limit=K,
    )
    where = visible_memories(query, group)
    ef = int(ef_search or engine.settings.hnsw_ef_search)
    total, within, seconds = 0.0, 0.0, []
    for embedding in embeddings:
        async with engine.database.db.begin() as conn:
            await conn.execute(text(f"SET LOCAL hnsw.ef_search = {ef}"))
            started = time.perf_counter()
            approx = await vector_search(conn, where, embedding, K)
            seconds.append(time.perf_counter() - started)
        async with engine.database.db.begin() as conn:
            await conn.execute(text("SET LOCAL enable_indexscan = off"))
            await conn.execute(text("SET LOCAL enable_bitmapscan = off"))
            exact = await vector_search(conn, where, embedding, K)
        exact_ids = {row.id for row, _ in exact}
        total += len({row.id for row, _ in approx} & exact_ids) / max(1, len(exact))
        if exact:
            kth = _distance(min(score for _, score in exact))
            hits = sum(_distance(score) <= kth * (1 + EPSILON) + 1e-9 for _, score in approx)
            within += hits / len(exact)
    count = max(1, len(embeddings))
    return total / count, within / count, statistics.median(seconds or [0.0])


def _distance(score: float) -> float:
    """Cosine distance back from vector_search's score (1 - distance / 2)."""
    return 2.0 * (1.0 - score)


async def uses_hnsw(engine: Engine, embedding: Sequence[float]) -> bool:
    """Whether the planner picks the HNSW index for a scoped vector query."""
    vector = "[" + ",".join(f"{x:.6f}" for x in embedding) + "]"
    async with engine.database.db.begin() as conn:
        plan = (
            await conn.execute(
                text(
                    "EXPLAIN SELECT id FROM memories WHERE project = 'default' "
                    "AND \"group\" = 'default' AND status = 'active' "
                    "ORDER BY embedding <=> CAST(:v AS vector) LIMIT 10"
                ),
                {"v": vector},
            )
        ).all()
    return any("memories_embedding" in str(row[0]) for row in plan)
